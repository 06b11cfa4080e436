"""Broker lifecycle: ordered, idempotent stop; data survives a restart; waiting requests answer on stop."""

from __future__ import annotations

import threading
import time
import uuid

from broker.log.log_manager import CLEAN_SHUTDOWN_FILE
from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import ApiKey

from .requests import batch, create, fetch, fetch_body, produce, values_in
from .wire import Wire


def test_stop_is_idempotent_and_data_survives_restart(tmp_path):
    registry = f"memory:{uuid.uuid4().hex}"
    b = EmbeddedBroker(0, zookeeper_connect=registry, log_dir=tmp_path).start()
    with Wire(b.bootstrap_servers) as w:
        create(w, "kept", 2)
        produce(w, "kept", batch([b"a", b"b"]), partition=1)
    b.stop()
    b.stop()
    assert (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    b2 = EmbeddedBroker(0, zookeeper_connect=registry, log_dir=tmp_path).start()
    try:
        assert b2.broker.log_manager.had_clean_shutdown == {tmp_path: True}
        with Wire(b2.bootstrap_servers) as w:
            part = fetch(w, "kept", 0, partition=1)
            assert values_in(part.records) == [b"a", b"b"] and part.high_watermark == 2
            assert produce(w, "kept", batch([b"c"]), partition=1).base_offset == 2
    finally:
        b2.stop()


def test_waiting_long_poll_answers_when_the_broker_stops(tmp_path):
    b = EmbeddedBroker(0, zookeeper_connect=f"memory:{uuid.uuid4().hex}", log_dir=tmp_path).start()
    with Wire(b.bootstrap_servers) as w:
        create(w, "idle")
        cid = w.send(ApiKey.FETCH, 12, fetch_body("idle", 0, 0, max_wait_ms=30_000, min_bytes=1))
        time.sleep(0.2)
        stopper = threading.Thread(target=b.stop)
        started = time.monotonic()
        stopper.start()
        got, resp = w.receive(ApiKey.FETCH, 12)
        assert got == cid and resp.responses[0].partitions[0].error_code == 0
        stopper.join(30)
        assert time.monotonic() - started < 10
