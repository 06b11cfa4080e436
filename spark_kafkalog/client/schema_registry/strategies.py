"""Subject name strategies: which subject a serializer registers (and looks up) its schema under.

A strategy is called as ``strategy(ctx, record_name) -> subject`` (confluent-kafka's signature; its own
strategy functions are accepted too). ``record_name`` is the schema's record name: an Avro record's full name
(a primitive's type name), a JSON Schema's ``title``, a Protobuf message's full name.

=====================================  ==============================  =========================================
function                               subject                         Confluent's Java class (also accepted)
=====================================  ==============================  =========================================
``topic_subject_name_strategy``        ``<topic>-key``/``-value``      ``...subject.TopicNameStrategy``
``record_subject_name_strategy``       ``<record name>``               ``...subject.RecordNameStrategy``
``topic_record_subject_name_strategy`` ``<topic>-<record name>``       ``...subject.TopicRecordNameStrategy``
=====================================  ==============================  =========================================

``subject_name_strategy(setting)`` turns a setting (None: the topic strategy; a callable; a short or full Java
class name, any case) into the function. Pure functions, thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.client.serialization import SerializationContext

__all__ = [
    "SubjectNameStrategy",
    "record_subject_name_strategy",
    "subject_name_strategy",
    "topic_record_subject_name_strategy",
    "topic_subject_name_strategy",
]

SubjectNameStrategy = Callable[[Any, "str | None"], "str | None"]
"""``strategy(ctx, record_name) -> subject`` (None: no subject, so no registration or lookup)."""


def _context(ctx: SerializationContext | None, strategy: str) -> SerializationContext:
    if ctx is None:
        raise ValueError(
            f"{strategy} needs a SerializationContext (topic and field); pass one, or use record_subject_name_strategy"
        )
    return ctx


def topic_subject_name_strategy(ctx: SerializationContext | None, record_name: str | None) -> str | None:
    """``<topic>-key`` or ``<topic>-value`` (Confluent's TopicNameStrategy, the default)."""
    ctx = _context(ctx, "topic_subject_name_strategy")
    return f"{ctx.topic}-{ctx.field}"


def record_subject_name_strategy(ctx: SerializationContext | None, record_name: str | None) -> str | None:
    """The record's name (Confluent's RecordNameStrategy); None for a schema without one."""
    return record_name


def topic_record_subject_name_strategy(ctx: SerializationContext | None, record_name: str | None) -> str | None:
    """``<topic>-<record name>`` (Confluent's TopicRecordNameStrategy); None for a schema without a name."""
    ctx = _context(ctx, "topic_record_subject_name_strategy")
    return None if record_name is None else f"{ctx.topic}-{record_name}"


_BY_NAME: dict[str, SubjectNameStrategy] = {
    "topicnamestrategy": topic_subject_name_strategy,
    "recordnamestrategy": record_subject_name_strategy,
    "topicrecordnamestrategy": topic_record_subject_name_strategy,
    "topic_subject_name_strategy": topic_subject_name_strategy,
    "record_subject_name_strategy": record_subject_name_strategy,
    "topic_record_subject_name_strategy": topic_record_subject_name_strategy,
}


def subject_name_strategy(setting: Any, key: str = "subject.name.strategy") -> SubjectNameStrategy:
    """The strategy function a setting names (see the module docstring); ``ConfigError`` naming ``key``
    for anything else."""
    if setting is None:
        return topic_subject_name_strategy
    if callable(setting):
        return setting
    if isinstance(setting, str):
        short = setting.strip().rsplit(".", 1)[-1].lower()
        if short in _BY_NAME:
            return _BY_NAME[short]
    raise ConfigError(
        f"setting {key!r}: {setting!r} is not a subject name strategy "
        "(TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy, or a callable(ctx, record_name))"
    )
