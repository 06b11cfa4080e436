"""``EmbeddedCluster``'s broker properties: cluster-wide then per-broker config, ``{host}``/``{id}``/``{port<n>}``."""

from broker.embedded_cluster import EmbeddedCluster


def test_per_broker_config_wins_and_placeholders_are_filled_once(tmp_path):
    c = EmbeddedCluster(
        2,
        data_dir=tmp_path,
        zookeeper_connect="zk:2181",
        broker_ports={1: 9001, 2: 9002},
        broker_config={
            "listeners": "CLIENT://{host}:{port},INTERNAL://{host}:{port1}",
            "listener.security.protocol.map": "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "auto.create.topics.enable": False,
        },
        broker_configs={2: {"broker.rack": "rack-{id}", "num.partitions": 3}},
    )
    p1, p2 = c._properties(1), c._properties(2)
    internal1 = c.extra_ports[1][1]
    assert p1["listeners"] == f"CLIENT://127.0.0.1:9001,INTERNAL://127.0.0.1:{internal1}"
    assert p2["listeners"].startswith("CLIENT://127.0.0.1:9002,INTERNAL://127.0.0.1:")
    assert c.extra_ports[2][1] != internal1
    assert c._properties(1)["listeners"] == p1["listeners"]  # the same ports after a restart
    assert p1["auto.create.topics.enable"] == "false"
    assert (p2["broker.rack"], p2["num.partitions"]) == ("rack-2", "3") and "broker.rack" not in p1


def test_without_listeners_a_broker_has_one_plaintext_listener_on_its_port(tmp_path):
    c = EmbeddedCluster(1, data_dir=tmp_path, zookeeper_connect="zk:2181", broker_ports={1: 9011})
    assert c._properties(1)["listeners"] == "PLAINTEXT://127.0.0.1:9011"
