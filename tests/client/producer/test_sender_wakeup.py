"""The producer's sender thread is woken for every record: a ``send`` racing the thread's handling of an
earlier wake-up must not leave later wake-ups suppressed (records then waited for the 1 s poll timeout or
the next response: 0.5 s median delivery latency with a consumer busy in another thread)."""

from __future__ import annotations

import select

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.producer.accumulator import RecordAccumulator
from spark_kafkalog.client.producer.sender import Sender


class _RacingSocket:
    """The wake-up socket, with another thread's ``wakeup()`` landing inside the sender's first ``recv``."""

    def __init__(self, sock, race) -> None:
        self.sock = sock
        self.race = race

    def fileno(self) -> int:
        return self.sock.fileno()

    def recv(self, n: int) -> bytes:
        if self.race is not None:
            race, self.race = self.race, None
            race()
        return self.sock.recv(n)


def test_a_wakeup_racing_the_drain_of_the_previous_one_still_wakes_the_thread():
    cfg = ClientConfig.from_kafka_properties({"bootstrap.servers": "127.0.0.1:9"})
    client = KafkaClient(cfg, _producer=True)
    accumulator = RecordAccumulator(
        batch_size=cfg.batch_size, linger_ms=0, compression=cfg.compression_type, buffer_memory=cfg.buffer_memory
    )
    sender = Sender(client, accumulator, cfg, idempotent=False)  # not started: this thread plays it
    real = sender._wakeup_r
    try:
        sender.wakeup()  # a send: the thread's select sees the socket readable
        sender._wakeup_r = _RacingSocket(real, sender.wakeup)  # the next send lands while it drains
        sender._poll(1.0)
        sender._wakeup_r = real
        sender.wakeup()  # a later send must reach the thread
        readable, _, _ = select.select([real], [], [], 1.0)
        assert readable, "the wake-up was suppressed: the sender would sleep until its poll timeout"
    finally:
        real.close()
        sender._wakeup_w.close()
        client.close()
