"""Request handlers, one module per API. Each module declares ``API_KEY``, ``VERSIONS`` (the range it
serves; ApiVersions answers from these) and ``async def handle(ctx, request)``; its docstring lists the
versions served and known gaps. ``register_all`` puts them into a ``HandlerRegistry``."""

from __future__ import annotations

from importlib import import_module

from broker.network.handler_registry import HandlerRegistry

MODULES = (
    "api_versions", "metadata", "produce", "fetch", "list_offsets", "find_coordinator", "init_producer_id",
    "offset_for_leader_epoch", "create_topics", "delete_topics", "create_partitions", "delete_records",
    "describe_configs", "describe_cluster",
)


def register_all(registry: HandlerRegistry) -> None:
    for name in MODULES:
        mod = import_module(f"{__name__}.{name}")
        registry.register(mod.API_KEY, mod.VERSIONS[0], mod.VERSIONS[1], mod.handle)
