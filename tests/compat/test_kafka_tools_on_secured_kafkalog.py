"""Apache Kafka's own Java clients and tools (3.9.1 and 4.4.0) against a secured kafkalog broker.

One in-process kafkalog broker on the session's ZooKeeper for the module, with the listeners Kafka users meet:

* ``SASL_SSL``: SCRAM-SHA-512 and SCRAM-SHA-256, the broker's JKS keystore;
* ``SASL_PLAINTEXT``: PLAIN (JAAS ``user_carol``), SCRAM-SHA-512 and SCRAM-SHA-256;
* ``MTLS``: SSL with ``ssl.client.auth=required`` (the client brings a PKCS12 keystore);
* ``OAUTH``: SASL_SSL with OAUTHBEARER and Kafka's unsecured-JWS validator;
* ``REAUTH``: SASL_SSL/SCRAM-SHA-512 with ``connections.max.reauth.ms=3000`` (KIP-368);
* ``INTERNAL``: PLAINTEXT, the inter-broker listener (the test's own set-up goes through it).

The clients' settings are ``client.properties`` files as Kafka's tools take them (``--command-config``,
``--producer.config``, ``--consumer.config``): ``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``
with Kafka's login modules, and a JKS truststore. Kafka 3.9.1 runs its core jar's tools (ConsoleProducer,
ConfigCommand) and its kafka-clients 3.9.1 through ``java/SecureClientDriver.java``; Kafka 4.4.0 runs its
kafka-tools. The last tests run Kafka 3.9.1 and 4.4.0 brokers to show how Debian's kcat (librdkafka 2.0.2, whose
SCRAM repeats the client nonce) fares: Kafka 3.9.1 and kafkalog let it in, Kafka 4.4.0 refuses it.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from broker.api import HandlerEntry, RequestContext
from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, Consumer, NewTopic, TopicPartition
from spark_kafkalog.client.admin import UserScramCredentialUpsertion
from spark_kafkalog.protocol import ApiKey
from tests.integration.security.third_party import kcat_environment
from tests.security.certs import CLIENT_DN, PASSWORD, TlsMaterial, build_tls_material
from tests.waiting import wait_until

from .kafka_broker import KafkaBroker
from .peers import KAFKA_39, KAFKA_44, TOOLS_44, Peer
from .tools import compile_java, run_java, run_tool

pytestmark = pytest.mark.compat

JAVA_DIR = Path(__file__).parent / "java"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
OAUTHBEARER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
USERS = {"alice": "alice-secret", "admin": "admin-secret"}  # SCRAM-SHA-512 and SCRAM-SHA-256 each
PLAIN_USER, PLAIN_PASSWORD = "carol", "carol-secret"
REAUTH_MS = 3000
INVALID_CREDENTIALS = "Authentication failed during authentication due to invalid credentials with SASL mechanism {}"

# The Kafka release whose tools and clients a test runs: 3.9.1 (its broker jar's classpath) or 4.4.0 (kafka-tools).
VERSIONS = {"kafka-3.9.1": KAFKA_39, "kafka-4.4.0": TOOLS_44}


@pytest.fixture(params=sorted(VERSIONS))
def peer(request) -> Peer:
    return VERSIONS[request.param]


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> TlsMaterial:
    return build_tls_material(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def secured(zookeeper, tls, tmp_path_factory):
    """The kafkalog broker of the module docstring, with SCRAM users alice and admin (both mechanisms)."""
    listeners = {
        "SASL_SSL": "SASL_SSL",
        "SASL_PLAINTEXT": "SASL_PLAINTEXT",
        "MTLS": "SSL",
        "OAUTH": "SASL_SSL",
        "REAUTH": "SASL_SSL",
        "INTERNAL": "PLAINTEXT",
    }
    config: dict[str, Any] = {
        "listeners": ",".join(f"{name}://127.0.0.1:0" for name in listeners),
        "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in listeners.items()),
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512,SCRAM-SHA-256",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512,SCRAM-SHA-256",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
            f'{PLAIN} required username="{PLAIN_USER}" password="{PLAIN_PASSWORD}" '
            f'user_{PLAIN_USER}="{PLAIN_PASSWORD}";'
        ),
        "listener.name.oauth.sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.oauth.oauthbearer.sasl.jaas.config": f"{OAUTHBEARER} required;",
        "listener.name.reauth.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.reauth.connections.max.reauth.ms": str(REAUTH_MS),
        "listener.name.mtls.ssl.client.auth": "required",
        "ssl.keystore.type": "JKS",
        "ssl.keystore.location": str(tls.broker_keystore_jks),
        "ssl.keystore.password": PASSWORD,
        "ssl.key.password": PASSWORD,
        "ssl.truststore.type": "JKS",
        "ssl.truststore.location": str(tls.truststore_jks),
        "ssl.truststore.password": PASSWORD,
        "auto.create.topics.enable": "true",
        "num.partitions": "1",
        "offsets.topic.num.partitions": "4",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "group.initial.rebalance.delay.ms": "0",
    }
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"{zookeeper.connect_string}/kafkalog-sec-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("kafkalog-secured"),
        **config,
    ).start()
    try:
        with AdminClient(internal(broker)) as admin:
            admin.alter_user_scram_credentials(
                [
                    UserScramCredentialUpsertion(user, mechanism, password, 8192)
                    for user, password in USERS.items()
                    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512")
                ]
            )
        for user in USERS:
            wait_for_credential(broker, user, "SCRAM-SHA-512", present=True)
            wait_for_credential(broker, user, "SCRAM-SHA-256", present=True)
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def driver() -> Path:
    return compile_java((JAVA_DIR / "SecureClientDriver.java").read_text())


def bootstrap(broker: EmbeddedBroker, listener: str) -> str:
    """``127.0.0.1:<port>`` of one of the running broker's listeners."""
    assert broker.broker is not None, "the kafkalog broker is not running"
    return f"127.0.0.1:{broker.broker.bound_ports[listener]}"


def internal(broker: EmbeddedBroker) -> str:
    return bootstrap(broker, "INTERNAL")


def wait_for_credential(broker: EmbeddedBroker, user: str, mechanism: str, *, present: bool) -> None:
    """The broker's SCRAM credential cache (fed by ZooKeeper notifications) has, or no longer has, the credential."""
    assert broker.broker is not None and broker.broker.metadata_sync is not None, "the kafkalog broker is not running"
    cache = broker.broker.metadata_sync.scram_credentials
    what = f"{user}'s {mechanism} credential {'in' if present else 'gone from'} the broker's cache"
    wait_until(lambda: (cache.lookup(mechanism, user) is not None) == present, 15, what)


def new_topic(broker: EmbeddedBroker) -> str:
    name = f"sec-tools-{uuid.uuid4().hex[:10]}"
    with AdminClient(internal(broker)) as admin:
        admin.create_topics([NewTopic(name, 1, 1)])
    return name


def properties(path: Path, settings: dict[str, str]) -> str:
    """Write ``settings`` as a Java .properties file (no value here needs escaping) and return its path."""
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    path.chmod(0o600)
    return str(path)


def truststore(tls: TlsMaterial) -> dict[str, str]:
    return {
        "ssl.truststore.location": str(tls.truststore_jks),
        "ssl.truststore.password": PASSWORD,
        "ssl.truststore.type": "JKS",
    }


def scram_ssl(tls: TlsMaterial, user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> dict[str, str]:
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": f'{SCRAM} required username="{user}" password="{password}";',
        **truststore(tls),
    }


def plain_sasl(user: str, password: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": f'{PLAIN} required username="{user}" password="{password}";',
    }


def mtls(tls: TlsMaterial) -> dict[str, str]:
    return {
        "security.protocol": "SSL",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(tls.client_keystore_p12),
        "ssl.keystore.password": PASSWORD,
        "ssl.key.password": PASSWORD,
        **truststore(tls),
    }


def oauthbearer(tls: TlsMaterial, subject: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": f'{OAUTHBEARER} required unsecuredLoginStringClaim_sub="{subject}";',
        **truststore(tls),
    }


def read_back(broker: EmbeddedBroker, topic: str, n: int) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of partition 0's first ``n`` records, read by kafkalog's consumer on INTERNAL."""
    records: list = []
    with Consumer(internal(broker), auto_offset_reset="earliest", fetch_max_wait_ms=100) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        deadline = time.monotonic() + 30
        while len(records) < n and time.monotonic() < deadline:
            records.extend(consumer.poll(200))
    return [(r.offset, r.key, r.value) for r in records]


def driver_records(out: str) -> list[tuple[int, str, str]]:
    rows = [line.split(" ", 3)[1:] for line in out.splitlines() if line.startswith("record ")]
    return [(int(offset), key, value) for offset, key, value in rows]


def list_topics_error(driver: Path, peer: Peer, props: str, servers: str) -> tuple[str, int, str]:
    """SecureClientDriver list-topics expected to fail: (exception class, elapsed ms, message)."""
    proc = run_java(driver, "SecureClientDriver", "list-topics", props, servers, peer=peer, check=False)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("error ")), None)
    assert proc.returncode == 3 and line is not None, f"expected a failure:\n{proc.stdout}\n{proc.stderr[-3000:]}"
    _, cls, elapsed, message = line.split(" ", 3)
    return cls, int(elapsed), message


# 1. Console tools over SASL_SSL with SCRAM-SHA-512 ------------------------------------------------------------


def test_console_producer_and_consumer_over_sasl_ssl_scram_sha_512(secured, tls, tmp_path, peer, driver):
    """Kafka's console producer (3.9.1 or 4.4.0) writes over SASL_SSL/SCRAM-SHA-512 with its client.properties
    flag; the records read back by Kafka's console consumer (4.4.0, ``--command-config``) or by Kafka 3.9.1's
    Java consumer, and by kafkalog itself."""
    servers = bootstrap(secured, "SASL_SSL")
    props = properties(tmp_path / "client.properties", scram_ssl(tls, "alice", USERS["alice"]))
    topic = new_topic(secured)
    n = 30
    lines = [f"key-{i}:value-{i}" for i in range(n)]
    # Kafka 4.4 spells the client settings --command-config/--command-property (KIP-1147; --producer.config and
    # --consumer.config are deprecated there), Kafka 3.9 --producer.config/--producer-property
    config, prop = (
        ("--command-config", "--command-property") if peer is TOOLS_44 else ("--producer.config", "--producer-property")
    )
    run_tool(
        "kafka-console-producer", "--bootstrap-server", servers, "--topic", topic, config, props,
        "--property", "parse.key=true", "--property", "key.separator=:", prop, "acks=all",
        input="\n".join(lines) + "\n", peer=peer,
    )  # fmt: skip
    assert read_back(secured, topic, n) == [(i, f"key-{i}".encode(), f"value-{i}".encode()) for i in range(n)]
    if peer is TOOLS_44:
        out = run_tool(
            "kafka-console-consumer", "--bootstrap-server", servers, "--topic", topic, "--from-beginning",
            "--command-config", props, "--max-messages", str(n), "--timeout-ms", "30000",
            "--property", "print.key=true", "--property", "print.offset=true",
        ).stdout  # fmt: skip
        printed = [line.split("\t") for line in out.splitlines() if line.startswith("Offset:")]
        assert printed == [[f"Offset:{i}", f"key-{i}", f"value-{i}"] for i in range(n)]
    else:
        out = run_java(driver, "SecureClientDriver", "consume", props, servers, topic, str(n), peer=peer).stdout
        assert driver_records(out) == [(i, f"key-{i}", f"value-{i}") for i in range(n)]


def test_perf_tools_over_sasl_ssl_with_client_properties(secured, tls, tmp_path):
    """kafka-producer-perf-test and kafka-consumer-perf-test (4.4.0, ``--command-config``) over
    SASL_SSL/SCRAM-SHA-512."""
    servers = bootstrap(secured, "SASL_SSL")
    settings = scram_ssl(tls, "alice", USERS["alice"])
    props = properties(tmp_path / "client.properties", settings)
    topic = new_topic(secured)
    n, size = 500, 64
    produced = run_tool(
        "kafka-producer-perf-test", "--topic", topic, "--num-records", str(n), "--record-size", str(size),
        "--throughput", "-1", "--command-config", props, "--command-property", f"bootstrap.servers={servers}",
        "acks=all",
    ).stdout  # fmt: skip
    assert produced.strip().splitlines()[-1].startswith(f"{n} records sent, ")
    assert len(read_back(secured, topic, n)) == n
    consumed = run_tool(
        "kafka-consumer-perf-test", "--bootstrap-server", servers, "--topic", topic, "--num-records", str(n),
        "--timeout", "60000", "--command-config", props,
    ).stdout  # fmt: skip
    header, row = (line.split(", ") for line in consumed.strip().splitlines()[-2:])
    assert int(dict(zip(header, row, strict=True))["data.consumed.in.nMsg"]) == n


# 2. kafka-configs manages SCRAM users over AlterUserScramCredentials ----------------------------------------


def test_kafka_configs_adds_a_scram_user_who_logs_in_at_once_and_deletes_them(secured, tls, tmp_path, peer, driver):
    """kafka-configs (3.9.1 or 4.4.0) ``--command-config admin.properties`` (admin over SASL_SSL) adds bob's
    SCRAM-SHA-256 credential; once the broker's cache has it (ZooKeeper notification, no restart) bob logs in with
    a Kafka tool (kafka-topics --list; Kafka 3.9.1's console producer); ``--delete-config`` removes it and bob's
    Java client is refused with the generic SASL failure."""
    servers = bootstrap(secured, "SASL_SSL")
    admin = properties(tmp_path / "admin.properties", scram_ssl(tls, "admin", USERS["admin"]))
    bob = f"bob-{uuid.uuid4().hex[:6]}"
    users = ("--entity-type", "users", "--entity-name", bob)
    added = run_tool(
        "kafka-configs", "--bootstrap-server", servers, "--command-config", admin, "--alter", *users,
        "--add-config", "SCRAM-SHA-256=[iterations=8192,password=bob-secret]", peer=peer,
    )  # fmt: skip
    assert f"Completed updating config for user {bob}." in added.stdout
    assert "bob-secret" not in added.stdout + added.stderr
    wait_for_credential(secured, bob, "SCRAM-SHA-256", present=True)
    bob_props = properties(tmp_path / "bob.properties", scram_ssl(tls, bob, "bob-secret", "SCRAM-SHA-256"))
    topic = new_topic(secured)
    if peer is TOOLS_44:
        listed = run_tool("kafka-topics", "--bootstrap-server", servers, "--command-config", bob_props, "--list")
        assert topic in listed.stdout.split()
    else:  # Kafka 3.9.1's core jar has no kafka-topics: its console producer
        run_tool(
            "kafka-console-producer", "--bootstrap-server", servers, "--topic", topic, "--producer.config", bob_props,
            input="from bob\n", peer=peer,
        )  # fmt: skip
        assert read_back(secured, topic, 1) == [(0, None, b"from bob")]

    deleted = run_tool(
        "kafka-configs", "--bootstrap-server", servers, "--command-config", admin, "--alter", *users,
        "--delete-config", "SCRAM-SHA-256", peer=peer,
    )  # fmt: skip
    assert f"Completed updating config for user {bob}." in deleted.stdout
    wait_for_credential(secured, bob, "SCRAM-SHA-256", present=False)
    cls, _elapsed, message = list_topics_error(driver, peer, bob_props, servers)
    assert (cls, message) == (
        "org.apache.kafka.common.errors.SaslAuthenticationException",
        INVALID_CREDENTIALS.format("SCRAM-SHA-256"),
    )


def described_user_lines(out: str, user: str) -> list[str]:
    """The lines of ``kafka-configs --describe --entity-type users`` that are about ``user``."""
    return [line.strip() for line in out.splitlines() if f"'{user}'" in line]


def test_kafka_configs_describes_users_as_on_kafka(secured, tls, tmp_path, kafka):
    """The same user and credential, added by kafka-configs to Apache Kafka (3.9.1 with its own tool, 4.4.0 with
    its own) and to kafkalog, is described in the same words by ``--describe --entity-type users``."""
    peer = KAFKA_39 if kafka.peer is KAFKA_39 else TOOLS_44
    user = f"dave-{uuid.uuid4().hex[:6]}"
    add = ("--alter", "--entity-type", "users", "--entity-name", user, "--add-config")
    credential = "SCRAM-SHA-256=[iterations=8192,password=dave-secret]"
    describe = ("--describe", "--entity-type", "users")
    # Apache Kafka's side must not raise ToolError (the expected failure is kafkalog's): check=False and asserts
    added = run_tool(
        "kafka-configs", "--bootstrap-server", kafka.bootstrap_servers, *add, credential, peer=peer, check=False
    )
    assert added.returncode == 0, f"kafka-configs --alter failed on Apache Kafka {kafka.version}:\n{added.stderr}"

    def on_kafka() -> list[str]:
        proc = run_tool(
            "kafka-configs", "--bootstrap-server", kafka.bootstrap_servers, *describe, peer=peer, check=False
        )
        assert proc.returncode == 0, f"kafka-configs --describe failed on Apache Kafka {kafka.version}:\n{proc.stderr}"
        return described_user_lines(proc.stdout, user)

    wait_until(lambda: bool(on_kafka()), 30, f"{user} described by Apache Kafka {kafka.version}")
    expected = on_kafka()

    servers = bootstrap(secured, "SASL_SSL")
    admin = properties(tmp_path / "admin.properties", scram_ssl(tls, "admin", USERS["admin"]))
    run_tool("kafka-configs", "--bootstrap-server", servers, "--command-config", admin, *add, credential, peer=peer)
    wait_for_credential(secured, user, "SCRAM-SHA-256", present=True)
    out = run_tool("kafka-configs", "--bootstrap-server", servers, "--command-config", admin, *describe, peer=peer)
    assert described_user_lines(out.stdout, user) == expected


# 3. Wrong password and unknown user ---------------------------------------------------------------------------


def test_java_client_wrong_password_and_unknown_user_fail_alike_and_quickly(secured, tls, tmp_path, peer, driver):
    servers = bootstrap(secured, "SASL_SSL")
    wrong = properties(tmp_path / "wrong.properties", scram_ssl(tls, "alice", "not-alice-secret"))
    unknown = properties(tmp_path / "unknown.properties", scram_ssl(tls, "nobody", "not-alice-secret"))
    results = [list_topics_error(driver, peer, props, servers) for props in (wrong, unknown)]
    expected = INVALID_CREDENTIALS.format("SCRAM-SHA-512")
    for cls, elapsed_ms, message in results:
        assert cls == "org.apache.kafka.common.errors.SaslAuthenticationException"
        assert message == expected
        assert elapsed_ms < 10_000, f"the failure took {elapsed_ms} ms"


def test_kafka_topics_with_a_bad_password_fails_quickly_naming_the_mechanism(secured, tls, tmp_path):
    servers = bootstrap(secured, "SASL_SSL")
    outputs = []
    for user in ("alice", "nobody"):
        props = properties(tmp_path / f"{user}.properties", scram_ssl(tls, user, "not-the-password"))
        started = time.monotonic()
        proc = run_tool("kafka-topics", "--bootstrap-server", servers, "--command-config", props, "--list", check=False)
        elapsed = time.monotonic() - started
        output = proc.stdout + proc.stderr
        assert proc.returncode != 0, output
        assert INVALID_CREDENTIALS.format("SCRAM-SHA-512") in output, output
        assert elapsed < 30, f"kafka-topics took {elapsed:.1f} s to fail"
        outputs.append(re.findall(r"Error while executing topic command : (.*)", output))
    assert outputs[0] == outputs[1] == [INVALID_CREDENTIALS.format("SCRAM-SHA-512")]


# 4. PLAIN, mTLS with a PKCS12 keystore, OAUTHBEARER (unsecured JWS) ---------------------------------------------

CASES = {  # listener, client settings, the principal kafkalog's handlers see
    "sasl-ssl-scram-sha-512": ("SASL_SSL", lambda tls: scram_ssl(tls, "alice", USERS["alice"]), "User:alice"),
    "sasl-plaintext-plain": ("SASL_PLAINTEXT", lambda tls: plain_sasl(PLAIN_USER, PLAIN_PASSWORD), "User:carol"),
    "ssl-client-certificate": ("MTLS", mtls, f"User:{CLIENT_DN}"),
    "sasl-ssl-oauthbearer-unsecured": ("OAUTH", lambda tls: oauthbearer(tls, "alice"), "User:alice"),
}


@pytest.fixture
def produce_principals(secured, monkeypatch) -> set[tuple[str, str]]:
    """(listener, principal) of every Produce request the broker handles while the test runs."""
    assert secured.broker is not None and secured.broker.socket_server is not None
    registry = secured.broker.socket_server.registry
    lookup = registry.get
    seen: set[tuple[str, str]] = set()

    def recording(api_key: int) -> HandlerEntry | None:
        entry = lookup(api_key)
        if entry is None or api_key != ApiKey.PRODUCE:
            return entry
        handler = entry.handler

        async def produce(ctx: RequestContext, body: Any) -> Any:
            seen.add((ctx.listener, ctx.principal))
            return await handler(ctx, body)

        return dataclasses.replace(entry, handler=produce)

    monkeypatch.setattr(registry, "get", recording)
    return seen


@pytest.mark.parametrize("case", sorted(CASES))
def test_java_clients_round_trip(secured, tls, tmp_path, peer, driver, produce_principals, case):
    """Kafka's Java producer and consumer (3.9.1 or 4.4.0) over each kind of listener; the broker saw the
    principal Kafka would: the SASL user, the client certificate's DN, the token's ``sub``."""
    listener, settings, principal = CASES[case]
    props = properties(tmp_path / "client.properties", settings(tls))
    topic = new_topic(secured)
    n = 20
    out = run_java(
        driver, "SecureClientDriver", "round-trip", props, bootstrap(secured, listener), topic, str(n), peer=peer
    ).stdout
    assert driver_records(out) == [(i, f"key-{i}", f"value-{i}") for i in range(n)]
    assert read_back(secured, topic, n) == [(i, f"key-{i}".encode(), f"value-{i}".encode()) for i in range(n)]
    assert produce_principals == {(listener, principal)}


def test_mtls_listener_refuses_a_java_client_without_certificate(secured, tls, tmp_path, driver):
    props = properties(tmp_path / "client.properties", {"security.protocol": "SSL", **truststore(tls)})
    cls, elapsed_ms, _message = list_topics_error(driver, TOOLS_44, props, bootstrap(secured, "MTLS"))
    assert cls == "org.apache.kafka.common.errors.SslAuthenticationException"
    assert elapsed_ms < 10_000


# 5. KIP-368 re-authentication ------------------------------------------------------------------------------


def test_java_clients_reauthenticate_on_their_own(secured, tls, tmp_path, peer, driver):
    """Sessions of 3 s: a producer and a group consumer working for 10 s re-authenticate every connection several
    times, lose nothing, and never fail an authentication."""
    props = properties(tmp_path / "client.properties", scram_ssl(tls, "alice", USERS["alice"]))
    topic = new_topic(secured)
    out = run_java(
        driver, "SecureClientDriver", "reauth", props, bootstrap(secured, "REAUTH"), topic, "10", peer=peer
    ).stdout
    counts = dict(line.split()[:2] for line in out.splitlines() if line.startswith(("produced ", "consumed ")))
    assert int(counts["produced"]) >= 20 and counts["consumed"] == counts["produced"], out
    metrics = {
        (client, name): float(value)
        for _, client, name, value in (line.split() for line in out.splitlines() if line.startswith("metric "))
    }
    for client in ("producer", "consumer"):
        assert metrics[(client, "successful-reauthentication-total")] >= 2, out
        assert metrics[(client, "failed-reauthentication-total")] == 0, out
        assert metrics[(client, "failed-authentication-total")] == 0, out


# 6. librdkafka 2.0.2's SCRAM against Apache Kafka 3.9.1, 4.4.0 and kafkalog -------------------------------
#
# Debian's kcat 1.7.1 links librdkafka 2.0.2, whose SCRAM client-final message repeats the client nonce
# (r=<cnonce><cnonce><snonce>, fixed in librdkafka 2.6.1). Apache Kafka 3.9.1's ScramSaslServer checks only that
# the client-final nonce endsWith the server-first nonce, so it lets that message in; Kafka 4.4.0 checks equals
# (RFC 5802) and refuses it with the generic SASL failure. kafkalog accepts exactly server-first's nonce or
# librdkafka's <cnonce> + server-first's nonce, nothing else (spark_kafkalog/security/sasl/scram.py), so the kcat
# Debian ships works on it as on Kafka 3.9.1 while any other prefix is still refused (CVE-2024-56128).

# What Apache Kafka answers librdkafka 2.0.2's SCRAM: None = it authenticates, else the error message.
KAFKA_ON_LIBRDKAFKA_2_0_2 = {"kafka-3.9.1": None, "kafka-4.4.0": INVALID_CREDENTIALS}


@pytest.fixture(scope="module", params=sorted(KAFKA_ON_LIBRDKAFKA_2_0_2))
def scram_kafka(request, zookeeper, tmp_path_factory):
    """Apache Kafka (3.9.1 on ZooKeeper, 4.4.0 KRaft) with a SASL_PLAINTEXT listener (SCRAM-SHA-256/512) and
    alice's SCRAM credentials (added with kafka-configs over its PLAINTEXT listener)."""
    peer = {"kafka-3.9.1": KAFKA_39, "kafka-4.4.0": KAFKA_44}[request.param]
    connect = None if peer is KAFKA_44 else f"{zookeeper.connect_string}/kafka39-scram-{uuid.uuid4().hex[:8]}"
    broker = KafkaBroker(
        peer,
        tmp_path_factory.mktemp(f"{peer.name}-scram"),
        zookeeper_connect=connect,
        listeners={"SASL_PLAINTEXT": "SASL_PLAINTEXT"},
        extra={
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": f"{SCRAM} required;",
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": f"{SCRAM} required;",
        },
    )
    broker.start()
    try:
        tools = KAFKA_39 if peer is KAFKA_39 else TOOLS_44
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):  # one per request: KRaft refuses a user named twice
            run_tool(
                "kafka-configs", "--bootstrap-server", broker.bootstrap_servers, "--alter", "--entity-type", "users",
                "--entity-name", "alice", "--add-config", f"{mechanism}=[iterations=8192,password={USERS['alice']}]",
                peer=tools,
            )  # fmt: skip
        yield request.param, broker
    finally:
        broker.stop()


def kcat_list(servers: str, mechanism: str, env: dict[str, str] | None) -> subprocess.CompletedProcess:
    """``kcat -L`` as alice over SASL_PLAINTEXT (``env``: None for the system librdkafka)."""
    kcat = shutil.which("kcat")
    if kcat is None:
        pytest.fail("kcat is not installed (make install installs it)")
    cmd = [
        kcat, "-L", "-b", servers, "-m", "10", "-X", "security.protocol=SASL_PLAINTEXT",
        "-X", f"sasl.mechanism={mechanism}", "-X", "sasl.username=alice", "-X", f"sasl.password={USERS['alice']}",
    ]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)


def kcat_outcome(proc: subprocess.CompletedProcess) -> str | None:
    """None when ``kcat -L`` listed the broker, else the broker's message from librdkafka's
    "SASL authentication error: <message> (after N ms ...)" line (or the whole stderr when there is none)."""
    if proc.returncode == 0 and re.search(r"^ +broker \d+ at 127\.0\.0\.1:\d+", proc.stdout, re.M):
        return None
    match = re.search(r"SASL authentication error: (.*?) \(after", proc.stderr)
    return proc.stderr[-2000:] if match is None else match.group(1)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_librdkafka_2_0_2_scram_on_apache_kafka_and_kafkalog(secured, scram_kafka, tmp_path, mechanism):
    """The system kcat (librdkafka 2.0.2): Kafka 3.9.1 and kafkalog let it in, Kafka 4.4.0 refuses it with the
    generic message (see the section comment). On confluent-kafka's bundled librdkafka it lists every broker."""
    version = subprocess.run(["kcat", "-V"], capture_output=True, text=True, timeout=30)
    assert "librdkafka 2.0.2 " in version.stdout + version.stderr, "the system kcat no longer links librdkafka 2.0.2"
    name, kafka = scram_kafka
    brokers = {name: kafka.listener_bootstrap("SASL_PLAINTEXT"), "kafkalog": bootstrap(secured, "SASL_PLAINTEXT")}
    expected = KAFKA_ON_LIBRDKAFKA_2_0_2[name]
    assert kcat_outcome(kcat_list(brokers[name], mechanism, None)) == (expected and expected.format(mechanism))
    assert kcat_outcome(kcat_list(brokers["kafkalog"], mechanism, None)) is None
    current = kcat_environment(tmp_path)
    for broker, servers in brokers.items():
        assert kcat_outcome(kcat_list(servers, mechanism, current)) is None, f"{broker} refused librdkafka 2.16"
