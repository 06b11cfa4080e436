"""Clients for a test to run on another network host: an acks=all producer reporting what was acknowledged, and a
consumer reporting what a partition serves.

In-process: ``produce_acks_all(bootstrap, topic, values)`` and ``consume_to_end(bootstrap, topic)``. As a script,
inside a host's network namespace (``ip netns exec <ns> python -m tests.integration.host_clients ...``)::

    python -m tests.integration.host_clients produce BOOTSTRAP TOPIC PREFIX COUNT [--delivery-timeout-ms N]
        [--request-timeout-ms N]
    python -m tests.integration.host_clients consume BOOTSTRAP TOPIC [--timeout-ms N]

``produce`` sends the values ``<PREFIX>-0`` .. ``<PREFIX>-<COUNT-1>`` to partition 0 and prints one JSON object
per record once every future is done: ``{"value": "...", "offset": 7}`` or ``{"value": "...", "error": "..."}``.
``consume`` prints one JSON object ``{"records": [[offset, "value"], ...]}`` with partition 0 from its start to
the end offset the partition's leader reports, or ``{"error": "..."}``.

Both use the project's clients (``spark_kafkalog.client``); the producer is not idempotent unless asked (an
idempotent producer first needs a producer id, which an isolated broker may not be able to hand out). Values
are UTF-8 text.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

__all__ = ["produce_acks_all", "consume_to_end", "main"]


def produce_acks_all(
    bootstrap: str,
    topic: str,
    values: Sequence[bytes],
    *,
    delivery_timeout_ms: int = 30_000,
    request_timeout_ms: int = 10_000,
    idempotent: bool = False,
) -> dict[bytes, int | str]:
    """value -> acknowledged offset (int) or the error's text (str); values must be distinct."""
    from spark_kafkalog.client import Producer

    producer = Producer(
        bootstrap,
        acks="all",
        linger_ms=5,
        enable_idempotence=idempotent,
        request_timeout_ms=request_timeout_ms,
        delivery_timeout_ms=delivery_timeout_ms,
        max_block_ms=delivery_timeout_ms,
    )
    outcome: dict[bytes, int | str] = {}
    try:
        futures = []
        for value in values:
            try:
                futures.append((value, producer.send(topic, value, partition=0)))
            except Exception as e:  # no metadata within max.block.ms, ...: refused before any broker saw it
                outcome[value] = f"{type(e).__name__}: {e}"
        for value, future in futures:
            error = future.exception(timeout=delivery_timeout_ms / 1000 + 30)
            outcome[value] = f"{type(error).__name__}: {error}" if error is not None else future.result().offset
        return outcome
    finally:
        producer.close(timeout=5)


def consume_to_end(bootstrap: str, topic: str, *, timeout_ms: int = 20_000) -> list[tuple[int, bytes]]:
    """(offset, value) of partition 0 from the start to the end offset reported when called (the high watermark:
    what a consumer may see); raises ``TimeoutError`` if that end is not reached within ``timeout_ms``."""
    from spark_kafkalog.client import Consumer, TopicPartition

    tp = TopicPartition(topic, 0)
    deadline = time.monotonic() + timeout_ms / 1000
    with Consumer(bootstrap, enable_auto_commit=False, request_timeout_ms=min(timeout_ms, 10_000)) as consumer:
        consumer.assign([tp])
        consumer.seek_to_end([tp])
        end = consumer.position(tp)
        consumer.seek_to_beginning([tp])
        got: list[tuple[int, bytes]] = []
        while consumer.position(tp) < end:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}-0: at {consumer.position(tp)} of {end} after {timeout_ms} ms")
            got += [(r.offset, r.value) for r in consumer.poll(timeout_ms=200)]
        return got


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.integration.host_clients")
    commands = parser.add_subparsers(dest="command", required=True)
    produce = commands.add_parser("produce")
    produce.add_argument("bootstrap")
    produce.add_argument("topic")
    produce.add_argument("prefix")
    produce.add_argument("count", type=int)
    produce.add_argument("--delivery-timeout-ms", type=int, default=30_000)
    produce.add_argument("--request-timeout-ms", type=int, default=10_000)
    consume = commands.add_parser("consume")
    consume.add_argument("bootstrap")
    consume.add_argument("topic")
    consume.add_argument("--timeout-ms", type=int, default=20_000)
    args = parser.parse_args(argv)
    if args.command == "consume":
        try:
            records = consume_to_end(args.bootstrap, args.topic, timeout_ms=args.timeout_ms)
        except Exception as e:
            print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)
        else:
            print(json.dumps({"records": [[offset, value.decode()] for offset, value in records]}), flush=True)
        return 0
    values = [f"{args.prefix}-{i}".encode() for i in range(args.count)]
    outcome = produce_acks_all(
        args.bootstrap,
        args.topic,
        values,
        delivery_timeout_ms=args.delivery_timeout_ms,
        request_timeout_ms=args.request_timeout_ms,
    )
    for value, result in outcome.items():
        key = "offset" if isinstance(result, int) else "error"
        print(json.dumps({"value": value.decode(), key: result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
