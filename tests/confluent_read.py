"""Reading a topic back with a confluent-kafka consumer (librdkafka filters aborted transactions itself under
``read_committed``): the check the transaction and exactly-once tests share."""

from __future__ import annotations

import time
import uuid

import confluent_kafka


def confluent_values(
    bootstrap: str, topic: str, isolation: str, expect: int, *, idle_s: float = 2.0, timeout_s: float = 60.0
) -> list[bytes]:
    """Every record value a fresh confluent-kafka group member with ``isolation.level=isolation`` reads from the
    start of ``topic``: it stops once ``expect`` values arrived and nothing more came for ``idle_s`` (or after
    ``timeout_s``), so a test sees extra records, not only missing ones. In arrival order."""
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    out: list[bytes] = []
    deadline, idle_until = time.monotonic() + timeout_s, None
    try:
        while time.monotonic() < deadline:
            m = consumer.poll(0.3)
            if m is None or m.error():
                if len(out) >= expect:
                    idle_until = idle_until or time.monotonic() + idle_s
                    if time.monotonic() > idle_until:
                        break
                continue
            idle_until = None
            out.append(m.value())
    finally:
        consumer.close()
    return out
