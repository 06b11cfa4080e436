"""ShareHeartbeatThread without a broker: a failure inside the thread fails the member (so poll raises it) rather than
stopping heartbeats silently; close is idempotent."""

from __future__ import annotations

from spark_kafkalog.client import ClientConfig
from spark_kafkalog.client.share.heartbeat import ShareHeartbeatThread
from spark_kafkalog.client.share.membership import ShareMembership

CONFIG = ClientConfig.create(bootstrap_servers="127.0.0.1:1")


class BrokenMember(ShareMembership):
    def wants_coordinator(self, now: float) -> bool:
        raise RuntimeError("boom")


def test_a_failure_in_the_heartbeat_thread_fails_the_member():
    member = BrokenMember("g")
    member.subscribe(["t"])
    thread = ShareHeartbeatThread(CONFIG, member)
    thread.start()
    try:
        assert thread.changed.wait(10)
        error = member.take_error()
        assert error is not None and "heartbeat thread failed" in str(error) and "boom" in str(error)
    finally:
        thread.close()
        thread.close()
