"""Send records with acks=all and report, per record, the offset it was acknowledged at or why it was not.

In-process: ``produce_acks_all(bootstrap, topic, values)``. As a script, for a producer that must run on another
network host (``ip netns exec <ns> python -m tests.integration.acked_producer ...``)::

    python -m tests.integration.acked_producer BOOTSTRAP TOPIC PREFIX COUNT [--delivery-timeout-ms N]
        [--request-timeout-ms N]

sends the values ``<PREFIX>-0`` .. ``<PREFIX>-<COUNT-1>`` to partition 0 and prints one JSON object per record,
once every future is done: ``{"value": "...", "offset": 7}`` or ``{"value": "...", "error": "..."}``.

The producer is the project's (``spark_kafkalog.client.Producer``), without idempotence unless asked (an
idempotent producer first needs a producer id, which an isolated broker may not be able to hand out).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

__all__ = ["produce_acks_all", "main"]


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.integration.acked_producer")
    parser.add_argument("bootstrap")
    parser.add_argument("topic")
    parser.add_argument("prefix")
    parser.add_argument("count", type=int)
    parser.add_argument("--delivery-timeout-ms", type=int, default=30_000)
    parser.add_argument("--request-timeout-ms", type=int, default=10_000)
    args = parser.parse_args(argv)
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
