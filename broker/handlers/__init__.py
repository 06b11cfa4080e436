"""Request handlers, one module per API. Each module declares ``API_KEY``, ``VERSIONS`` (the range it
serves; ApiVersions answers from these) and ``async def handle(ctx, request)``; its docstring lists the
versions served and known gaps. ``register_all`` puts them into a ``HandlerRegistry``."""

from __future__ import annotations

from importlib import import_module

from broker.api import HandlerRegistry

MODULES = (
    "api_versions",
    "metadata",
    "produce",
    "fetch",
    "list_offsets",
    "find_coordinator",
    "join_group",
    "sync_group",
    "heartbeat",
    "leave_group",
    "offset_commit",
    "offset_fetch",
    "list_groups",
    "describe_groups",
    "consumer_group_heartbeat",
    "consumer_group_describe",
    "share_group_heartbeat",
    "share_group_describe",
    "delete_groups",
    "offset_delete",
    "init_producer_id",
    "offset_for_leader_epoch",
    "create_topics",
    "delete_topics",
    "create_partitions",
    "delete_records",
    "describe_configs",
    "alter_configs",
    "incremental_alter_configs",
    "describe_log_dirs",
    "describe_client_quotas",
    "alter_client_quotas",
    "describe_user_scram_credentials",
    "alter_user_scram_credentials",
    "describe_acls",
    "create_acls",
    "delete_acls",
    "describe_cluster",
    "describe_topic_partitions",
    "controlled_shutdown",
    "elect_leaders",
    "alter_partition_reassignments",
    "list_partition_reassignments",
    "add_partitions_to_txn",
    "add_offsets_to_txn",
    "end_txn",
    "txn_offset_commit",
    "describe_producers",
    "describe_transactions",
    "list_transactions",
    "write_txn_markers",
    "initialize_share_group_state",
    "read_share_group_state",
    "write_share_group_state",
    "delete_share_group_state",
    "read_share_group_state_summary",
    "describe_share_group_offsets",
    "alter_share_group_offsets",
    "delete_share_group_offsets",
    "sasl_handshake",
    "sasl_authenticate",
    "get_telemetry_subscriptions",
    "push_telemetry",
    "list_client_metrics_resources",
    "share_fetch",
    "share_acknowledge",
)


def register_all(registry: HandlerRegistry) -> None:
    for name in MODULES:
        mod = import_module(f"{__name__}.{name}")
        registry.register(mod.API_KEY, mod.VERSIONS[0], mod.VERSIONS[1], mod.handle)


def render_docs() -> str:
    """docs/broker-apis.md: what the broker serves, from the handler modules (their docstrings say the gaps)."""
    from spark_kafkalog.protocol import API_BY_KEY

    out = [
        "# APIs served by the broker",
        "",
        "Generated from `broker/handlers/` (`make docs`); ApiVersions answers with exactly these ranges.",
        "Declared versions (what the codec can read and write) are in [protocol.md](protocol.md).",
        "",
        "| API | key | served | declared | behaviour and gaps |",
        "|---|---|---|---|---|",
    ]
    for name in MODULES:
        mod = import_module(f"{__name__}.{name}")
        spec = API_BY_KEY[mod.API_KEY]
        doc = " ".join((mod.__doc__ or "").split())
        out.append(
            f"| {spec.name} | {int(mod.API_KEY)} | {mod.VERSIONS[0]}-{mod.VERSIONS[1]} | "
            f"{spec.min_version}-{spec.max_version} | {doc.replace('|', '/')} |"
        )
    return "\n".join(out) + "\n"
