"""Topic ids (KIP-516) in the streaming source's offset JSON, so a topic deleted and re-created under the same
name is told from the topic the query was reading, whatever its offsets (pure: no pyspark, no I/O).

Format. Beside Spark's ``{"topic":{"0":42}}`` entries, the offset JSON holds one extra key per topic read, whose
name carries the topic and its id and whose value is an empty object::

    {"orders":{"0":42,"1":17},"@topicId:orders:DNNw-hXqQCOW61shM7zZ2Q":{}}

The id is Kafka's text form of the topic's UUID (URL-safe base64 without padding, as ``kafka-topics
--describe`` prints it). A Kafka topic name holds only ``[a-zA-Z0-9._-]``, so a key beginning with ``@`` can
never be a topic, and the id never holds ``:``.

Why this shape: Spark's own parser of the Kafka offset JSON (``JsonUtils.partitionOffsets``, a
``Map[String, Map[Int, Long]]``) reads every key as a topic; an empty object gives that "topic" no partition, so
Spark's parser, and kafkalog's ``startingOffsets`` parser alike, read exactly the partitions and offsets Spark
would (the ids are dropped). Any other place (a non-object value, a non-integer partition key) would make
Spark's parser fail.

Compatibility: a checkpoint written before topic ids were recorded has no such keys; it loads as before (no
check for the topics it names until the next offset records their ids). A broker that does not answer topic
ids (Metadata before v10) gives none, and the offsets then hold none. Because Spark compares offset JSON texts
to decide whether new data came, the first trigger after such a checkpoint plans one (empty) batch that adds
the ids.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping

__all__ = [
    "TOPIC_ID_KEY_PREFIX",
    "id_entries",
    "is_id_key",
    "kafka_topic_id",
    "offset_topic_ids",
    "parse_id_key",
    "recreated_topics",
]

TOPIC_ID_KEY_PREFIX = "@topicId:"


def kafka_topic_id(value: str | uuid.UUID) -> str:
    """Kafka's text form of a topic id (``Uuid.toString``: URL-safe base64 of the 16 bytes, no padding) from a
    ``uuid.UUID`` or its hex text; Kafka's form is returned unchanged."""
    if isinstance(value, str):
        try:
            parsed = uuid.UUID(value)
        except ValueError:
            return value  # already Kafka's form
    else:
        parsed = value
    return base64.urlsafe_b64encode(parsed.bytes).rstrip(b"=").decode("ascii")


def is_id_key(key: object) -> bool:
    """Whether an offset JSON key is a topic-id entry rather than a topic."""
    return isinstance(key, str) and key.startswith(TOPIC_ID_KEY_PREFIX)


def parse_id_key(key: str) -> tuple[str, str] | None:
    """``"@topicId:orders:DNNw..."`` -> ``("orders", "DNNw...")``; None when it is not a well-formed entry."""
    if not is_id_key(key):
        return None
    topic, sep, topic_id = key[len(TOPIC_ID_KEY_PREFIX) :].rpartition(":")
    if not sep or not topic or not topic_id:
        return None
    return topic, topic_id


def id_entries(topic_ids: Mapping[str, str]) -> dict[str, dict]:
    """The offset JSON entries of ``{topic: id}``, sorted by topic (Spark compares offset JSON texts)."""
    return {f"{TOPIC_ID_KEY_PREFIX}{topic}:{topic_ids[topic]}": {} for topic in sorted(topic_ids)}


def offset_topic_ids(value: object) -> dict[str, str]:
    """The topic ids an offset JSON records (``{}`` for one written without them)."""
    if not isinstance(value, Mapping):
        return {}
    return dict(entry for key in value if (entry := parse_id_key(key)) is not None)


def recreated_topics(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Topics known on both sides whose id changed: ``{topic: (id before, id after)}``, sorted by topic. A
    topic without an id on either side (an old checkpoint, an old broker) is not judged."""
    return {t: (before[t], after[t]) for t in sorted(set(before) & set(after)) if before[t] != after[t]}
