"""TLS against plaintext on one broker, kafkalog and Apache Kafka 3.9.1 in the same run (issue 26): produce and
consume MB/s and broker CPU per listener, and what TLS costs each system.

Each system runs one broker with three listeners, the same names and kinds on both (``LISTENERS``):
``PLAINTEXT`` (also the bootstrap of topic creation and deletion, and the inter-broker listener), ``SSL``
(server authentication only, no client certificate) and ``SASL_SSL`` with SASL/PLAIN (``MECHANISM``; a JAAS
``user_<name>`` entry on the listener). PLAIN, not SCRAM, so that the figures are TLS's cost and not SCRAM's
per-connection PBKDF2 (one login per client connection either way). Certificates come from
``tests.security.certs.build_tls_material`` (a local CA, an RSA 2048 broker key; JKS keystore and truststore
for both brokers, the CA as PEM for librdkafka, whose default host name check stays on). kafkalog brokers are
processes (``bench.kafka_compare_bench.KafkalogBrokers``), Kafka brokers JVMs (``KafkaBrokers``), both with
``broker_settings(1)``; Kafka's JVM runs with Kafka's own start-up flags (``KAFKA_JVM_OPTIONS``: 1 GB heap, G1,
C2), not the tests' C1-only small-heap JVM; one ZooKeeper server (the project's) serves both, each under its own chroot; one
system's broker is started, measured and stopped before the other's (never both at once).

For each listener, a fresh topic of ``PARTITIONS`` partitions is created (over PLAINTEXT), written by a
confluent-kafka Producer (acks=1, ``LINGER_MS``, ``BATCH_BYTES``, no compression, ``RECORD_BYTES``-byte
values; ``bench.kafka_compare_bench.confluent``) and read back by a confluent-kafka Consumer assigned every
partition, both connected to that listener, then deleted. Each phase records its MB/s (10**6 bytes of record
values per second) and the CPU seconds (user + system, ``/proc``) of the broker process and its descendants
meanwhile (``broker_cpu_s``), from which ``broker_cpu_s_per_mb``; each case also records the CPU seconds of
this process (the clients, librdkafka's threads included) over both phases (``client_cpu_s``). Before the
measured cases a warm-up writes and reads ``WARM_UP_RECORDS`` over every listener (the JVM's JIT, the
broker's TLS paths).

kafkalog's own client too (unless ``--no-kafkalog-client``; ``kafkalog_client_case``): on every listener of
both brokers, after the confluent-kafka case, a fresh topic written by ``spark_kafkalog.client.Producer`` and
read back with ``KafkaClient.fetch_batches`` (batches, not decoded), ``--client-records`` records (a quarter of
``--records``): ``kafkalog_client_rounds``, ``kafkalog_client`` (best of the rounds) and
``kafkalog_client_tls_cost`` in the JSON.

``--rounds`` rounds (2; 1 with ``--quick``); the system measured first alternates per round, and the order of
the listeners rotates per round. ``rounds`` in the JSON holds each round; ``results`` holds, per system,
listener and phase, the round with the highest MB/s (its CPU figures with it: best-of-N is the least disturbed
by other load on a shared machine); ``median`` the median of every figure over the rounds. ``tls_cost`` holds
the derived figures per system and secured listener (``tls_cost``): the listener / PLAINTEXT ratio of MB/s
and of broker CPU per MB, and the throughput drop in percent (Kafka's published cost of TLS: 17-55% lower
throughput). Also recorded: the TLS version and cipher each broker negotiated with Python's ``ssl`` (default
client context), whether kernel TLS could be used (``/proc/sys/net/ipv4/tcp_available_ulp`` lists ``tls``),
and the load averages before and after each broker's cases.

Writes ``bench/results/tls.json`` and ``tls.png``; ``--quick`` (small inputs, a smoke run) writes under a
temporary folder unless ``--out`` is given. Run: ``python -m bench.tls_bench [--quick] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import ssl
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.kafka_compare_bench import (  # noqa: E402
    BATCH_BYTES,
    LINGER_MS,
    PARTITIONS,
    RECORD_BYTES,
    SYSTEMS,
    KafkaBrokers,
    KafkalogBrokers,
    confluent,
    create_topic,
    measured,
    median_of,
)
from bench.machine import machine_info  # noqa: E402

RESULTS = ROOT / "bench" / "results"
LISTENERS = {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_SSL": "SASL_SSL"}  # name -> security protocol
SECURED = ("SSL", "SASL_SSL")
PHASES = ("produce", "consume")
MECHANISM = "PLAIN"
USER = "bench"
ACKS = "1"
WARM_UP_RECORDS = 50_000
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
KAFKA_PUBLISHED_DROP_PCT = (17, 55)
ULP_PATH = Path("/proc/sys/net/ipv4/tcp_available_ulp")
# Kafka's own start-up flags (kafka-server-start.sh's heap, kafka-run-class.sh's performance options), not the
# tests' C1-only small-heap JVM: TLS in the JVM leans on C2's AES-GCM intrinsics.
KAFKA_JVM_OPTIONS = (
    "-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
)  # fmt: skip


# -- configuration (pure) ---------------------------------------------------------------------------
def plain_jaas(user: str, password: str) -> str:
    """The broker's JAAS line for SASL/PLAIN on a listener: ``user`` logs in as itself with ``password``."""
    return f'{PLAIN_LOGIN_MODULE} required username="{user}" password="{password}" user_{user}="{password}";'


def tls_store_settings(keystore: str, truststore: str, password: str) -> dict[str, str]:
    """Kafka's broker keystore and truststore settings for JKS stores of one ``password`` (store and key)."""
    return {
        "ssl.keystore.type": "JKS",
        "ssl.keystore.location": keystore,
        "ssl.keystore.password": password,
        "ssl.key.password": password,
        "ssl.truststore.type": "JKS",
        "ssl.truststore.location": truststore,
        "ssl.truststore.password": password,
    }


def kafkalog_broker_config(keystore: str, truststore: str, password: str, user_password: str) -> dict[str, str]:
    """A kafkalog broker's settings for ``LISTENERS`` (``EmbeddedCluster`` placeholders: PLAINTEXT on
    ``{port}``, SSL on ``{port1}``, SASL_SSL on ``{port2}``)."""
    ports = ["{port}", "{port1}", "{port2}"]
    return {
        "listeners": ",".join(f"{name}://{{host}}:{port}" for name, port in zip(LISTENERS, ports, strict=True)),
        "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in LISTENERS.items()),
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": MECHANISM,
        f"listener.name.sasl_ssl.{MECHANISM.lower()}.sasl.jaas.config": plain_jaas(USER, user_password),
        **tls_store_settings(keystore, truststore, password),
    }


def kafka_broker_config(keystore: str, truststore: str, password: str, user_password: str) -> dict[str, str]:
    """A Kafka 3.9 broker's ``extra`` settings for the SSL and SASL_SSL listeners ``KafkaBroker`` adds beside
    its PLAINTEXT one (``kafka_listeners``)."""
    return {
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": MECHANISM,
        f"listener.name.sasl_ssl.{MECHANISM.lower()}.sasl.jaas.config": plain_jaas(USER, user_password),
        **tls_store_settings(keystore, truststore, password),
    }


def kafka_listeners() -> dict[str, str]:
    """``KafkaBroker``'s ``listeners``: every listener of ``LISTENERS`` but its own PLAINTEXT."""
    return {name: protocol for name, protocol in LISTENERS.items() if name != "PLAINTEXT"}


def client_config(listener: str, ca_pem: str, user_password: str) -> dict[str, str]:
    """librdkafka settings for ``listener`` (a key of ``LISTENERS``): none for PLAINTEXT; the CA for SSL; the
    CA and SASL/PLAIN credentials for SASL_SSL."""
    protocol = LISTENERS[listener]
    config: dict[str, str] = {}
    if protocol != "PLAINTEXT":
        config |= {"security.protocol": protocol, "ssl.ca.location": ca_pem}
    if protocol.startswith("SASL_"):
        config |= {"sasl.mechanisms": MECHANISM, "sasl.username": USER, "sasl.password": user_password}
    return config


def listener_order(round_index: int) -> list[str]:
    """The listeners in the order round ``round_index`` (from 0) measures them: ``LISTENERS`` rotated by it."""
    names = list(LISTENERS)
    k = round_index % len(names)
    return names[k:] + names[:k]


# -- derived figures (pure) -------------------------------------------------------------------------
def cpu_per_mb(figures: dict) -> float | None:
    """A phase's broker CPU seconds per 10**6 bytes of record values (``records * RECORD_BYTES``)."""
    mb = figures["records"] * RECORD_BYTES / 1e6
    return figures["broker_cpu_s"] / mb if mb else None


def with_cpu_per_mb(case: dict) -> dict:
    """``case`` (``confluent``'s phases) with ``broker_cpu_s_per_mb`` (``cpu_per_mb``) in each phase."""
    out = dict(case)
    for phase in PHASES:
        per_mb = cpu_per_mb(case[phase])
        out[phase] = case[phase] | {"broker_cpu_s_per_mb": None if per_mb is None else round(per_mb, 6)}
    return out


def best_of(rounds: list[dict]) -> dict:
    """Per system, listener and phase, the figures of the round with the highest ``mb_per_s``; ``round`` (from
    1) says which. ``rounds`` are ``{system: {listener: {phase: figures}}}``."""
    out: dict = {}
    for system, listeners in rounds[0].items():
        for listener in listeners:
            for phase in PHASES:
                runs = [r[system][listener][phase] for r in rounds]
                k = max(range(len(runs)), key=lambda i: runs[i]["mb_per_s"])
                out.setdefault(system, {}).setdefault(listener, {})[phase] = runs[k] | {"round": k + 1}
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def tls_cost(results: dict) -> dict:
    """Per system and secured listener and phase: ``mb_per_s_ratio`` (listener / PLAINTEXT),
    ``throughput_drop_pct`` (100 * (1 - that ratio)) and ``cpu_per_mb_ratio`` (listener / PLAINTEXT broker CPU
    seconds per MB, from ``broker_cpu_s`` and ``records``)."""
    out: dict = {}
    for system, listeners in results.items():
        plain = listeners["PLAINTEXT"]
        for listener in SECURED:
            if listener not in listeners:
                continue
            for phase in PHASES:
                secured, base = listeners[listener][phase], plain[phase]
                ratio = _ratio(secured["mb_per_s"], base["mb_per_s"])
                out.setdefault(system, {}).setdefault(listener, {})[phase] = {
                    "mb_per_s_ratio": ratio,
                    "throughput_drop_pct": None if ratio is None else round(100 * (1 - ratio), 1),
                    "cpu_per_mb_ratio": _ratio(cpu_per_mb(secured), cpu_per_mb(base)),
                }
    return out


def kernel_tls(ulp_text: str | None) -> dict:
    """Whether kernel TLS (the ``tls`` upper-layer protocol) is available, from ``tcp_available_ulp``'s text
    (None: the file is missing)."""
    ulps = [] if ulp_text is None else ulp_text.split()
    return {"tcp_available_ulp": ulps, "ktls_available": "tls" in ulps}


# -- measuring --------------------------------------------------------------------------------------
def negotiated(bootstrap: str, ca_pem: str) -> dict[str, Any]:
    """The TLS version and cipher suite a default Python client context negotiates with ``bootstrap``."""
    host, port = bootstrap.rsplit(":", 1)
    context = ssl.create_default_context(cafile=ca_pem)
    with (
        socket.create_connection((host, int(port)), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname=host) as tls,
    ):
        cipher = tls.cipher()
        return {
            "version": tls.version(),
            "cipher": cipher[0] if cipher else None,
            "bits": cipher[2] if cipher else None,
        }


def delete_topic(bootstrap: str, topic: str) -> None:
    from spark_kafkalog.client import AdminClient

    with AdminClient(bootstrap) as admin:
        admin.delete_topics([topic])


def run_case(plain_bootstrap: str, bootstrap: str, settings: dict[str, str], records: int, pids: list[int]) -> dict:
    """A fresh topic written and read back by confluent-kafka at ``bootstrap`` with ``settings``, then deleted."""
    topic = create_topic(plain_bootstrap, 1, "tls")
    try:
        client_before = time.process_time()
        case = confluent(bootstrap, 1, ACKS, records, pids, settings, topic=topic)
        case["client_cpu_s"] = round(time.process_time() - client_before, 2)
    finally:
        delete_topic(plain_bootstrap, topic)
    return with_cpu_per_mb(case)


def kafkalog_client_case(
    plain_bootstrap: str, bootstrap: str, settings: dict[str, str], records: int, pids: list[int]
) -> dict:
    """kafkalog's own client at ``bootstrap`` with ``settings`` (librdkafka's names, which it reads too): a
    ``Producer`` (acks=1, the same linger and batch size) sending ``records`` values, then
    ``KafkaClient.fetch_batches`` reading every partition back (batches, not decoded: the data source's
    path); a fresh topic, deleted afterwards."""
    from spark_kafkalog.client import KafkaClient, OffsetSpec, Producer, TopicPartition

    topic = create_topic(plain_bootstrap, 1, "tls-kafkalog-client")
    value = os.urandom(RECORD_BYTES)
    config = {"bootstrap.servers": bootstrap, **settings}

    def produce() -> dict:
        started = time.perf_counter()
        with Producer(config, acks=ACKS, linger_ms=LINGER_MS, batch_size=BATCH_BYTES) as producer:
            send = producer.send
            for _ in range(records):
                send(topic, value)
            producer.flush()
        seconds = time.perf_counter() - started
        return {"records": records, "mb_per_s": round(records * RECORD_BYTES / 1e6 / seconds, 2)}

    def consume() -> dict:
        started = time.perf_counter()
        count = 0
        with KafkaClient(config, max_partition_fetch_bytes=4 << 20) as client:
            tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
            ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
            for tp in tps:
                for fetched in client.fetch_batches(tp, 0, ends[tp]):
                    count += fetched.batch.last_offset - fetched.batch.base_offset + 1
        seconds = time.perf_counter() - started
        if count != records:
            raise RuntimeError(f"kafkalog's client fetched {count} of {records} records of {topic}")
        return {"records": count, "mb_per_s": round(count * RECORD_BYTES / 1e6 / seconds, 2)}

    try:
        client_before = time.process_time()
        case: dict[str, Any] = {"produce": measured(pids, produce), "consume": measured(pids, consume)}
        case["client_cpu_s"] = round(time.process_time() - client_before, 2)
    finally:
        delete_topic(plain_bootstrap, topic)
    return with_cpu_per_mb(case)


class Broker:
    """One system's broker with ``LISTENERS``: ``bootstraps`` (listener -> host:port) and ``pids``."""

    def __init__(self, system: str, zookeeper_connect: str, data_dir: Path, tls: Any, user_password: str) -> None:
        stores = (str(tls.broker_keystore_jks), str(tls.truststore_jks), tls.password, user_password)
        self.system = system
        if system == "kafkalog":
            self.brokers: Any = KafkalogBrokers(1, zookeeper_connect, data_dir, extra=kafkalog_broker_config(*stores))
        else:
            self.brokers = KafkaBrokers(
                1,
                zookeeper_connect,
                data_dir,
                extra=kafka_broker_config(*stores),
                listeners=kafka_listeners(),
                jvm_options=KAFKA_JVM_OPTIONS,
            )

    def __enter__(self) -> Broker:
        self.brokers.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.brokers.__exit__(*exc)

    @property
    def bootstraps(self) -> dict[str, str]:
        if self.system == "kafkalog":
            cluster = self.brokers.cluster
            extra = cluster.extra_ports[1]
            return {
                "PLAINTEXT": cluster.bootstrap_servers,
                "SSL": f"{cluster.host}:{extra[1]}",
                "SASL_SSL": f"{cluster.host}:{extra[2]}",
            }
        broker = self.brokers.brokers[0]
        return {"PLAINTEXT": broker.bootstrap_servers} | {n: broker.listener_bootstrap(n) for n in kafka_listeners()}

    @property
    def pids(self) -> list[int]:
        return list(self.brokers.pids)


def peer_version() -> str:
    from tests.compat.peers import KAFKA_39, classpath

    classpath(KAFKA_39)  # PeerMissingError naming `make peers`, before anything starts
    return KAFKA_39.what


def java_version() -> str:
    """The first line of ``java -version`` of the JDK the Kafka broker runs on."""
    import subprocess

    from broker.cluster.zookeeper_server import find_java

    out = subprocess.run([find_java(), "-version"], capture_output=True, text=True, timeout=60)
    return (out.stderr or out.stdout).splitlines()[0]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (a smoke run), output in a temp folder")
    parser.add_argument("--records", type=int, default=None, help="records per case (default 1,000,000)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of every case, best kept (default 2)")
    parser.add_argument("--out", type=Path, default=None, help="the JSON to write (the PNG goes next to it)")
    parser.add_argument(
        "--client-records", type=int, default=None, help="records per kafkalog-client case (default records / 4)"
    )
    parser.add_argument("--no-kafkalog-client", action="store_true", help="only the confluent-kafka cases")
    args = parser.parse_args(argv)
    records = args.records or (20_000 if args.quick else 1_000_000)
    warm_up = min(records, WARM_UP_RECORDS)
    client_records = 0 if args.no_kafkalog_client else (args.client_records or max(1, records // 4))
    rounds = args.rounds or (1 if args.quick else 2)
    if args.out is None:
        folder = Path(tempfile.mkdtemp(prefix="tls-bench-quick-")) if args.quick else RESULTS
        args.out = folder / "tls.json"
    try:
        peer = peer_version()
    except Exception as exc:
        from tests.compat.peers import PeerMissingError

        if isinstance(exc, PeerMissingError):
            raise SystemExit(str(exc)) from None
        raise

    from broker.cluster.zookeeper_server import ZooKeeperServer
    from tests.security.certs import build_tls_material

    data_dir = Path(tempfile.mkdtemp(prefix="tls-bench-"))
    tls = build_tls_material(data_dir / "tls")
    user_password = os.urandom(12).hex()  # never written to the JSON
    result: dict = {
        "machine": machine_info(["confluent-kafka", "cryptography"]),
        "quick": args.quick,
        "peers": {"broker": peer, "java": java_version(), "kafka_jvm_options": KAFKA_JVM_OPTIONS},
        "openssl": ssl.OPENSSL_VERSION,
        "kernel_tls": kernel_tls(ULP_PATH.read_text() if ULP_PATH.exists() else None),
        "settings": {
            "brokers": 1,
            "partitions": PARTITIONS,
            "replication_factor": 1,
            "acks": ACKS,
            "record_bytes": RECORD_BYTES,
            "records_per_case": records,
            "records_per_kafkalog_client_case": client_records,
            "warm_up_records": warm_up,
            "rounds": rounds,
            "linger_ms": LINGER_MS,
            "batch_size": BATCH_BYTES,
            "compression": "none",
            "listeners": LISTENERS,
            "sasl_mechanism": MECHANISM,
            "client_certificates": False,
            "broker_key": "RSA 2048, JKS keystore (local CA)",
            "client": "confluent-kafka (librdkafka), ssl.ca.location PEM, host name check on",
            "mb": "10**6 bytes of record values",
            "results": "per phase, the round with the highest MB/s",
            "kafka_published_throughput_drop_pct": KAFKA_PUBLISHED_DROP_PCT,
        },
        "load_average": {"start": os.getloadavg()},
        "negotiated": {},
        "rounds": [],
        "kafkalog_client_rounds": [],
    }
    zookeeper = ZooKeeperServer(data_dir / "zookeeper").start()
    try:
        for r in range(rounds):
            runs: dict = {}
            own: dict = {}
            for system in SYSTEMS if r % 2 == 0 else tuple(reversed(SYSTEMS)):
                name = f"{system}-{r + 1}"
                print(f"== round {r + 1}, {system}: starting one broker with {', '.join(LISTENERS)}", flush=True)
                with Broker(system, f"{zookeeper.connect_string}/{name}", data_dir / name, tls, user_password) as b:
                    bootstraps, pids = b.bootstraps, b.pids
                    result["negotiated"].setdefault(
                        system, {n: negotiated(bootstraps[n], str(tls.ca_pem)) for n in SECURED}
                    )
                    for listener in LISTENERS:  # warm-up, not recorded
                        settings = client_config(listener, str(tls.ca_pem), user_password)
                        run_case(bootstraps["PLAINTEXT"], bootstraps[listener], settings, warm_up, pids)
                    result["load_average"][f"before_{name}"] = os.getloadavg()
                    for listener in listener_order(r):
                        settings = client_config(listener, str(tls.ca_pem), user_password)
                        case = run_case(bootstraps["PLAINTEXT"], bootstraps[listener], settings, records, pids)
                        runs.setdefault(system, {})[listener] = case
                        print(f"{system} {listener}: {json.dumps(case)}", flush=True)
                        if client_records:
                            case = kafkalog_client_case(
                                bootstraps["PLAINTEXT"], bootstraps[listener], settings, client_records, pids
                            )
                            own.setdefault(system, {})[listener] = case
                            print(f"{system} {listener}, kafkalog's client: {json.dumps(case)}", flush=True)
                    result["load_average"][f"after_{name}"] = os.getloadavg()
                shutil.rmtree(data_dir / name, ignore_errors=True)  # kept only on a failure
            result["rounds"].append({s: {n: runs[s][n] for n in LISTENERS} for s in SYSTEMS})
            if client_records:
                result["kafkalog_client_rounds"].append({s: {n: own[s][n] for n in LISTENERS} for s in SYSTEMS})
    finally:
        zookeeper.stop()
    result["results"] = best_of(result["rounds"])
    result["median"] = median_of(result["rounds"])
    result["tls_cost"] = tls_cost(result["results"])
    result["tls_cost_of_medians"] = tls_cost(result["median"])
    if client_records:
        result["kafkalog_client"] = best_of(result["kafkalog_client_rounds"])
        result["kafkalog_client_tls_cost"] = tls_cost(result["kafkalog_client"])
    print(json.dumps(result["tls_cost"], indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    plots.save("tls", result, args.out.with_suffix(".png"))
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}")
    shutil.rmtree(data_dir, ignore_errors=True)
    return result


if __name__ == "__main__":
    main()
