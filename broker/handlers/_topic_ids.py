"""Topics named by id (KIP-516) in the versions that drop the name: Produce v13, OffsetCommit v10, OffsetFetch
v10, TxnOffsetCommit v6. The request's topic entries (objects with ``topic_id`` and ``name``) are named in place
from this broker's metadata, so a handler goes on by name; the zero id names no topic."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from spark_kafkalog.protocol import ErrorCode

ZERO_ID = uuid.UUID(int=0)


def name_topics_by_id(metadata, topics: Iterable) -> set[uuid.UUID]:
    """Set each entry's ``name`` from its ``topic_id``; returns the ids no topic has here (UNKNOWN_TOPIC_ID)."""
    unknown = set()
    for t in topics:
        name = metadata.topic_by_id(t.topic_id) if t.topic_id != ZERO_ID else None
        if name is None:
            unknown.add(t.topic_id)
        else:
            t.name = name
    return unknown


def topic_id_of(metadata, name: str) -> uuid.UUID | None:
    """The id of topic ``name`` here, None when it does not exist (or has no id)."""
    topic = metadata.topics.get(name)
    tid = None if topic is None else topic.topic_id
    return None if tid is None or tid == ZERO_ID else tid


async def answer_by_topic_id(ctx, request, handle, topic_cls, part_cls):
    """Answer a request whose ``topics`` name topics by id (each with ``partitions`` of ``partition_index``):
    ``handle`` (which answers by name, one response topic per request topic, in order) gets the known topics,
    named; each id no topic has here is answered UNKNOWN_TOPIC_ID for each of its partitions, in request order;
    every answered topic carries its id."""
    order = list(request.topics)
    unknown = name_topics_by_id(ctx.services.metadata, order)
    request.topics = [t for t in order if t.topic_id not in unknown]
    try:
        response = await handle(ctx, request)
    finally:
        request.topics = order
    answered = iter(response.topics)
    topics = []
    for t in order:
        if t.topic_id in unknown:
            parts = [
                part_cls(partition_index=p.partition_index, error_code=ErrorCode.UNKNOWN_TOPIC_ID) for p in t.partitions
            ]
            topics.append(topic_cls(topic_id=t.topic_id, partitions=parts))
        else:
            entry = next(answered)
            entry.topic_id = t.topic_id
            topics.append(entry)
    response.topics = topics
    return response
