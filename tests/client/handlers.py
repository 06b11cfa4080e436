"""Response builders for scripted-broker handlers (Fetch, ListOffsets, Produce, InitProducerId).

They answer from data the test provides; they are not a log (no appends, no retention)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spark_kafkalog.protocol import API_BY_KEY
from spark_kafkalog.records import parse_batch_header, validate_batch

FETCH = API_BY_KEY[1].Response
LIST_OFFSETS = API_BY_KEY[2].Response
PRODUCE = API_BY_KEY[0].Response
INIT_PID = API_BY_KEY[22].Response


def fetch_response(
    topic: str,
    partition: int,
    *,
    records: bytes | None = b"",
    error: int = 0,
    hw: int = 0,
    log_start: int = 0,
    lso: int | None = None,
    aborted=None,
) -> Any:
    P = FETCH.FetchableTopicResponse.PartitionData
    return FETCH(
        responses=[
            FETCH.FetchableTopicResponse(
                topic=topic,
                partitions=[
                    P(
                        partition_index=partition,
                        error_code=error,
                        high_watermark=hw,
                        last_stable_offset=hw if lso is None else lso,
                        log_start_offset=log_start,
                        aborted_transactions=aborted,
                        records=records,
                    )
                ],
            )
        ]
    )


def serve_batches(batches: list[bytes], hw: int | None = None) -> Callable[..., Any]:
    """A Fetch handler answering from a fixed list of v2 batches (at most partition_max_bytes, at least
    one whole batch, as KIP-74 brokers do)."""
    last = parse_batch_header(batches[-1]).last_offset if batches else -1
    high = last + 1 if hw is None else hw

    def handler(request, _conn):
        t = request.body.topics[0]
        p = t.partitions[0]
        out = b""
        for b in batches:
            if parse_batch_header(b).last_offset < p.fetch_offset:
                continue
            if out and len(out) + len(b) > p.partition_max_bytes:
                out += b[: p.partition_max_bytes - len(out)]
                break
            out += b
        return fetch_response(t.topic, p.partition, records=out, hw=high)

    return handler


def list_offsets_response(request: Any, answer: Callable[[str, int, int], tuple[int, int, int]]) -> Any:
    """``answer(topic, partition, spec) -> (error, offset, timestamp)``."""
    P = LIST_OFFSETS.ListOffsetsTopicResponse.ListOffsetsPartitionResponse
    topics = []
    for t in request.body.topics:
        parts = []
        for p in t.partitions:
            error, offset, timestamp = answer(t.name, p.partition_index, p.timestamp)
            parts.append(
                P(
                    partition_index=p.partition_index,
                    error_code=error,
                    old_style_offsets=[offset],
                    offset=offset,
                    timestamp=timestamp,
                )
            )
        topics.append(LIST_OFFSETS.ListOffsetsTopicResponse(name=t.name, partitions=parts))
    return LIST_OFFSETS(topics=topics)


class ProduceLog:
    """Records every produced batch; ``answer(topic, partition, header) -> error code`` scripts failures."""

    def __init__(self, answer: Callable[[str, int, Any], int] | None = None) -> None:
        self.answer = answer or (lambda topic, partition, header: 0)
        self.batches: list[tuple[str, int, bytes]] = []
        self.next_offset: dict[tuple[str, int], int] = {}
        self.acks: list[int] = []

    def handler(self, request: Any, _conn: int) -> Any:
        from .scripted_broker import NO_RESPONSE

        self.acks.append(request.body.acks)
        out = []
        for t in request.body.topic_data:
            parts = []
            for p in t.partition_data:
                data = bytes(p.records)
                header = validate_batch(data)
                error = self.answer(t.name, p.index, header)
                base = -1
                if error == 0:
                    self.batches.append((t.name, p.index, data))
                    base = self.next_offset.get((t.name, p.index), 0)
                    self.next_offset[(t.name, p.index)] = base + header.records_count
                parts.append(
                    PRODUCE.TopicProduceResponse.PartitionProduceResponse(
                        index=p.index, error_code=error, base_offset=base, log_append_time_ms=-1, log_start_offset=0
                    )
                )
            out.append(PRODUCE.TopicProduceResponse(name=t.name, partition_responses=parts))
        if request.body.acks == 0:
            return NO_RESPONSE
        return PRODUCE(responses=out)


def init_producer_id(producer_id: int = 1000, epoch: int = 0) -> Callable[..., Any]:
    counter = {"n": 0}

    def handler(request, _conn):
        counter["n"] += 1
        return INIT_PID(error_code=0, producer_id=producer_id + counter["n"] - 1, producer_epoch=epoch)

    return handler
