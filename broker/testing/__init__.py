"""Testing with kafkalog: the pytest plugin (``broker.testing.pytest_plugin``, entry point ``pytest11``
``kafkalog``) and the helpers behind its fixtures, for users' own fixtures and scripts.

Importing this package is cheap: the broker and the client load when a broker, cluster or helper is first used.
``KafkalogResources`` (``broker.testing.resources``) starts brokers and clusters and reports leftovers;
``TopicFactory``, ``produce_records`` and ``read_records`` (``broker.testing.records``) create topics and
write and read records with kafkalog's client. docs/testing.md is the guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .records import TopicFactory, produce_records, read_records
    from .resources import KafkalogResources

__all__ = ["KafkalogResources", "TopicFactory", "produce_records", "read_records"]

_HOMES = {
    "KafkalogResources": "resources",
    "TopicFactory": "records",
    "produce_records": "records",
    "read_records": "records",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{home}"), name)
