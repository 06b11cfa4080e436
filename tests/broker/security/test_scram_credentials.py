"""SCRAM credentials where Kafka stores them: Kafka's ``ScramCredentialUtils`` string, user entity nodes written
the way kafka-configs writes them, the credential cache, and a change applied by every broker of a cluster on a
real ZooKeeper without a restart."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import uuid

import pytest
from kazoo.client import KazooClient

from broker.cluster.zk_layout import desanitize_entity_name, sanitize_entity_name
from broker.security.scram_credentials import ScramCredentialCache
from broker.server import EmbeddedBroker
from spark_kafkalog.client.admin import AdminClient, UserScramCredentialDeletion, UserScramCredentialUpsertion
from spark_kafkalog.client.errors import KafkaAuthenticationError
from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism
from tests.waiting import wait_until

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512


def kafka_string(hash_name: str, password: str, salt: bytes, iterations: int) -> str:
    """RFC 5802's keys as ``ScramCredentialUtils.credentialToString`` writes them, computed from hashlib alone."""
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hash_name).digest()
    stored_key = hashlib.new(hash_name, client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hash_name).digest()
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"salt={b64(salt)},stored_key={b64(stored_key)},server_key={b64(server_key)},iterations={iterations}"


def kafka_user_node(config: dict[str, str]) -> bytes:
    """``/config/users/<u>`` as Kafka's AdminZkClient writes it (its Json.encodeAsBytes: compact)."""
    return json.dumps({"version": 1, "config": config}, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "mechanism, iterations, salt",
    [(SHA256, 4096, b"2gs7vt1ymmf8wncw8pkd8hmtg"), (SHA512, 8192, bytes(range(20))), (SHA256, 16384, b"x")],
)
def test_credential_string_is_kafkas_exact_format_and_round_trips(mechanism, iterations, salt):
    expected = kafka_string(mechanism.hash_name, "alice-secret", salt, iterations)
    credential = ScramCredential.from_password(mechanism, "alice-secret", iterations, salt)
    assert credential.to_kafka_string() == expected
    assert ScramCredential.from_kafka_string(expected) == credential
    cache = ScramCredentialCache()
    cache.update_user("alice", {mechanism.mechanism_name: expected})
    assert cache.lookup(mechanism.mechanism_name, "alice") == credential


@pytest.mark.parametrize(
    "name, sanitized",
    [("alice", "alice"), ("a@b.c", "a%40b.c"), ("a b", "a%20b"), ("a*b", "a%2Ab"), ("x~y", "x%7Ey"), ("é", "%C3%A9")],
)
def test_user_names_are_sanitized_as_kafkas_sanitizer_does(name, sanitized):
    assert sanitize_entity_name(name) == sanitized
    assert desanitize_entity_name(sanitized) == name


def test_cache_follows_user_configs_and_ignores_other_keys(caplog):
    cache = ScramCredentialCache()
    s256 = kafka_string("sha256", "p", b"s1", 4096)
    s512 = kafka_string("sha512", "p", b"s2", 4096)
    cache.replace_all(
        {
            "alice": {"SCRAM-SHA-256": s256, "producer_byte_rate": "1024"},
            "quota-only": {"consumer_byte_rate": "5"},
            "<default>": {"producer_byte_rate": "7"},
        }
    )
    assert cache.users() == {"alice": ["SCRAM-SHA-256"]}
    assert cache.lookup("SCRAM-SHA-512", "alice") is None and cache.lookup("SCRAM-SHA-256", "bob") is None
    cache.update_user("bob", {"SCRAM-SHA-512": s512})
    cache.update_user("alice", {"producer_byte_rate": "1024"})  # credentials deleted, quota kept
    assert cache.users() == {"bob": ["SCRAM-SHA-512"]}
    with caplog.at_level(logging.ERROR):
        broken = s256.replace("iterations=4096", "iterations=lots")
        cache.update_user("carol", {"SCRAM-SHA-256": broken, "SCRAM-SHA-512": s512})
    assert cache.users()["carol"] == ["SCRAM-SHA-512"]
    assert "carol" in caplog.text and "SCRAM-SHA-256" in caplog.text
    assert s256.split(",")[1] not in caplog.text  # never the stored key
    cache.replace_all({})
    assert cache.users() == {} and "0 users" in repr(cache)


@pytest.fixture
def chroot(zookeeper):
    return f"{zookeeper.connect_string}/scram-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def raw(zookeeper, chroot):
    root = KazooClient(hosts=zookeeper.connect_string, timeout=10)
    root.start(timeout=10)
    root.ensure_path(chroot[len(zookeeper.connect_string) :])
    root.stop()
    root.close()
    client = KazooClient(hosts=chroot, timeout=10)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def test_kafka_written_user_nodes_are_read_and_writes_keep_their_other_keys(make_registry, chroot, raw):
    registry = make_registry(chroot)
    s256 = kafka_string("sha256", "alice-secret", b"salt", 8192)
    raw.create(
        "/config/users/alice%40example.com", kafka_user_node({"SCRAM-SHA-256": s256, "producer_byte_rate": "1024"})
    )
    raw.create("/config/users/bob/clients/app", b'{"version":1,"config":{"request_percentage":"50"}}', makepath=True)
    assert registry.user_config("alice@example.com") == {"SCRAM-SHA-256": s256, "producer_byte_rate": "1024"}
    assert registry.user_configs() == {"alice@example.com": registry.user_config("alice@example.com"), "bob": {}}
    registry.alter_user_config("carol", {"consumer_byte_rate": "5"})
    seq, _ = registry.config_changes_since(-1)

    s512 = kafka_string("sha512", "x", b"salt2", 4096)
    registry.alter_user_config("alice@example.com", {"SCRAM-SHA-512": s512, "SCRAM-SHA-256": None})
    assert json.loads(raw.get("/config/users/alice%40example.com")[0]) == {
        "version": 1,
        "config": {"producer_byte_rate": "1024", "SCRAM-SHA-512": s512},
    }
    assert registry.config_changes_since(seq)[1] == ["users/alice%40example.com"]
    notices = sorted(raw.get_children("/config/changes"))
    assert json.loads(raw.get(f"/config/changes/{notices[-1]}")[0]) == {
        "version": 2,
        "entity_path": "users/alice%40example.com",
    }


def test_config_changes_since_reports_purged_notifications_as_unknown(make_registry, chroot, raw):
    registry = make_registry(chroot)
    assert registry.config_changes_since(-1) == (-1, None)
    for i in range(3):
        registry.alter_user_config(f"u{i}", {"k": "v"})
    last, paths = registry.config_changes_since(-1)
    assert paths is None
    first = last - 2
    assert registry.config_changes_since(first) == (last, ["users/u1", "users/u2"])
    assert registry.config_changes_since(last) == (last, [])
    raw.delete(f"/config/changes/config_change_{first:010d}")  # purged, as Kafka purges old notices
    assert registry.config_changes_since(first - 1) == (last, None)


def test_a_kafka_written_credential_and_an_altered_one_reach_every_brokers_cache_without_a_restart(
    chroot, raw, tmp_path
):
    brokers = [EmbeddedBroker(i, zookeeper_connect=chroot, log_dir=tmp_path / f"b{i}").start() for i in (1, 2)]
    try:
        caches = [b.broker.metadata_sync.scram_credentials for b in brokers]
        # as `kafka-configs --zookeeper ... --alter --add-config 'SCRAM-SHA-256=[iterations=8192,password=...]'`
        s256 = kafka_string("sha256", "alice-secret", b"kafka-salt", 8192)
        raw.create("/config/users/alice", kafka_user_node({"SCRAM-SHA-256": s256}))
        raw.create("/config/changes/config_change_", b'{"version":2,"entity_path":"users/alice"}', sequence=True)
        expected = ScramCredential.from_kafka_string(s256)
        for i, cache in enumerate(caches):
            wait_until(lambda c=cache: c.lookup("SCRAM-SHA-256", "alice") == expected, 10, f"alice on broker {i + 1}")

        with AdminClient(brokers[0].bootstrap_servers) as admin:
            admin.alter_user_scram_credentials(
                [
                    UserScramCredentialUpsertion("bob", "SCRAM-SHA-512", "bob-secret", 4096),
                    UserScramCredentialDeletion("alice", "SCRAM-SHA-256"),
                ]
            )
            assert admin.describe_user_scram_credentials() == {
                "bob": [admin_info("SCRAM-SHA-512", 4096)],
            }
        for i, cache in enumerate(caches):
            wait_until(lambda c=cache: c.users() == {"bob": ["SCRAM-SHA-512"]}, 10, f"bob only on broker {i + 1}")
        bob = caches[1].lookup("SCRAM-SHA-512", "bob")
        assert bob == ScramCredential.from_password(SHA512, "bob-secret", 4096, bob.salt)
    finally:
        for b in brokers:
            b.stop()


def admin_info(mechanism: str, iterations: int):
    from spark_kafkalog.client.admin import ScramCredentialInfo

    return ScramCredentialInfo(mechanism, iterations)


@pytest.fixture
def make_registry():
    from broker.cluster.zk_registry import ZooKeeperRegistry

    registries = []

    def make(connect: str) -> ZooKeeperRegistry:
        registry = ZooKeeperRegistry(connect, session_timeout_ms=4000)
        registries.append(registry)
        registry.start()
        return registry

    yield make
    for registry in registries:
        registry.close()


def test_a_user_added_over_the_admin_api_logs_in_with_scram_and_is_refused_once_deleted(tmp_path):
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:scram-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path,
        listeners="PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        **{"sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512", "inter.broker.listener.name": "PLAINTEXT"},
    ).start()
    ports = broker.broker.bound_ports
    cache = broker.broker.metadata_sync.scram_credentials

    def login(password: str) -> bool:
        settings = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512"}
        settings.update({"sasl.username": "alice", "sasl.password": password, "retries": 0})
        try:
            with AdminClient(f"127.0.0.1:{ports['SASL_PLAINTEXT']}", **settings) as admin:
                admin.list_topics()
            return True
        except KafkaAuthenticationError:
            return False

    try:
        with AdminClient(f"127.0.0.1:{ports['PLAINTEXT']}") as admin:
            admin.alter_user_scram_credentials(
                [UserScramCredentialUpsertion("alice", "SCRAM-SHA-512", "alice-pw", 8192)]
            )
            wait_until(lambda: cache.lookup("SCRAM-SHA-512", "alice"), 10, "alice in the cache")
            assert login("alice-pw") and not login("alice-pw2")
            admin.alter_user_scram_credentials([UserScramCredentialDeletion("alice", "SCRAM-SHA-512")])
            wait_until(lambda: cache.lookup("SCRAM-SHA-512", "alice") is None, 10, "alice gone from the cache")
            assert not login("alice-pw")
    finally:
        broker.stop()


def test_a_user_notification_rereads_only_that_user_and_no_topic_config(tmp_path, monkeypatch):
    from spark_kafkalog.client import NewTopic

    broker = EmbeddedBroker(0, zookeeper_connect=f"memory:scram-{uuid.uuid4().hex[:8]}", log_dir=tmp_path).start()
    try:
        topic = f"t-{uuid.uuid4().hex[:6]}"
        with AdminClient(broker.bootstrap_servers) as admin:
            admin.create_topics([NewTopic(topic, 1, 1)])
        registry, cache = broker.broker.registry, broker.broker.metadata_sync.scram_credentials
        # the first notification a broker sees after finding none makes it re-read everything (it cannot tell
        # whether others were purged before it): have it, and one more (applied after it), done before counting
        for user in ("first", "second"):
            registry.alter_user_config(user, {"SCRAM-SHA-512": kafka_string("sha512", "pw", b"s", 4096)})
        wait_until(lambda: cache.lookup("SCRAM-SHA-512", "second"), 10, "the second user in the cache")
        reads: list[tuple[str, object]] = []
        for method in ("user_config", "user_configs", "topic_config"):
            real = getattr(registry, method)
            monkeypatch.setattr(registry, method, lambda *a, m=method, f=real: reads.append((m, a)) or f(*a))

        registry.alter_user_config("a@b", {"SCRAM-SHA-256": kafka_string("sha256", "pw", b"s", 4096)})
        wait_until(lambda: cache.lookup("SCRAM-SHA-256", "a@b"), 10, "a@b in the cache")
        assert reads == [("user_config", ("a@b",))]
        registry.set_topic_config(topic, {"retention.ms": "1000"})
        wait_until(lambda: ("topic_config", (topic,)) in reads, 10, "the topic's config re-read")
    finally:
        broker.stop()
