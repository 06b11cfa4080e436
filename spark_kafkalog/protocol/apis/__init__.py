"""One declaration per API (one module each), collected into ``API_BY_KEY``.

Each module defines ``API`` with ``schema.declare_api``; payloads that are not requests or responses
(the consumer protocol's subscription and assignment) define ``DATA`` with ``schema.declare_data``.
"""

from __future__ import annotations

from importlib import import_module

from ..schema import ApiSpec, DataSpec

_API_MODULES = (
    "api_versions",
    "produce",
    "fetch",
    "list_offsets",
    "metadata",
    "controlled_shutdown",
    "offset_commit",
    "offset_fetch",
    "find_coordinator",
    "join_group",
    "heartbeat",
    "leave_group",
    "sync_group",
    "describe_groups",
    "list_groups",
    "sasl_handshake",
    "create_topics",
    "delete_topics",
    "delete_records",
    "init_producer_id",
    "offset_for_leader_epoch",
    "describe_configs",
    "alter_configs",
    "sasl_authenticate",
    "create_partitions",
    "delete_groups",
    "incremental_alter_configs",
    "alter_partition_reassignments",
    "list_partition_reassignments",
    "offset_delete",
    "describe_cluster",
    "add_partitions_to_txn",
    "add_offsets_to_txn",
    "end_txn",
    "txn_offset_commit",
    "describe_transactions",
    "list_transactions",
    "write_txn_markers",
)
_DATA_MODULES: tuple[str, ...] = (
    "consumer_protocol_subscription",
    "consumer_protocol_assignment",
)

API_BY_KEY: dict[int, ApiSpec] = {}
DATA_BY_NAME: dict[str, DataSpec] = {}

for _name in _API_MODULES:
    _api = import_module(f"{__name__}.{_name}").API
    if _api.key in API_BY_KEY:
        raise RuntimeError(f"API key {_api.key} declared twice ({_name})")
    API_BY_KEY[_api.key] = _api
for _name in _DATA_MODULES:
    _data = import_module(f"{__name__}.{_name}").DATA
    DATA_BY_NAME[_data.name] = _data
