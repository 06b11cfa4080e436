"""KafkalogResources: what it starts it stops, and ``leftovers`` reports a port or process that outlives it."""

from __future__ import annotations

import socket
import subprocess
import sys

from broker.testing.resources import KafkalogResources, accepts_connections, process_alive


def test_a_stopped_broker_leaves_nothing_behind():
    resources = KafkalogResources({"num.partitions": "2"})
    broker = resources.start_broker({"log.retention.ms": "60000"})
    address = broker.bootstrap_servers
    assert resources.running == [broker]
    assert broker.config["num.partitions"] == 2
    assert broker.config["log.retention.ms"] == 60000
    assert accepts_connections(address)
    resources.stop_all()
    assert resources.running == []
    assert resources.addresses == [address]
    assert resources.leftovers() == []


def test_two_brokers_do_not_form_a_cluster():
    resources = KafkalogResources({})
    try:
        a, b = resources.start_broker(), resources.start_broker()
        assert a.config["zookeeper.connect"] != b.config["zookeeper.connect"]
        assert a.bootstrap_servers != b.bootstrap_servers
    finally:
        resources.stop_all()


def test_leftovers_name_a_port_still_listening_and_a_process_still_alive():
    resources = KafkalogResources({})
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            resources.addresses.append(address)
            resources.pids.append(child.pid)
            assert resources.leftovers() == [
                f"{address} still accepts connections",
                f"child process {child.pid} is still alive",
            ]
        finally:
            child.kill()
            child.wait()
    assert not process_alive(child.pid)
    assert resources.leftovers() == []


def test_restoring_a_broker_brings_it_up_clears_its_faults_and_passes_over_a_stopped_one():
    from broker.testing.isolation import restore_broker

    resources = KafkalogResources({})
    broker = resources.start_broker()
    try:
        broker.faults.push_errors("Produce", ["NOT_LEADER_OR_FOLLOWER"])
        broker.down()
        assert not accepts_connections(broker.bootstrap_servers)
        restore_broker(broker)
        assert broker.faults.active() == []
        assert accepts_connections(broker.bootstrap_servers)
        broker.stop()
        restore_broker(broker)  # a test stopped it: nothing to undo, no error
    finally:
        resources.stop_all()
    assert resources.leftovers() == []
