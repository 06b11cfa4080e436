"""Produce-then-consume round trips with real third-party clients over TLS and SASL.

Each function sends ``n`` records to partition 0 of ``topic`` and reads them back from offset 0, through one
client library, with that library's own spelling of the security settings (``Auth`` describes them once).
They raise on any failure; the caller checks the records that came back.
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Auth",
    "aiokafka_round_trip",
    "confluent_round_trip",
    "kafka_python_round_trip",
    "kcat_environment",
    "kcat_round_trip",
]


@dataclass(frozen=True)
class Auth:
    """How to reach one listener: ``protocol`` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), the SASL mechanism and
    credentials, the CA file, and an optional client certificate and key (PEM files)."""

    bootstrap: str
    protocol: str
    mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        return ctx

    def librdkafka(self) -> dict[str, str]:
        conf = {"bootstrap.servers": self.bootstrap, "security.protocol": self.protocol}
        if self.mechanism:
            conf["sasl.mechanism"] = self.mechanism
        if self.username is not None:
            conf.update({"sasl.username": self.username, "sasl.password": self.password or ""})
        if self.ca_file:
            conf["ssl.ca.location"] = self.ca_file
        if self.cert_file:
            conf.update({"ssl.certificate.location": self.cert_file, "ssl.key.location": self.key_file or ""})
        return conf

    def kafka_python(self) -> dict:
        conf: dict = {"bootstrap_servers": self.bootstrap, "security_protocol": self.protocol}
        if self.mechanism:
            conf.update(
                sasl_mechanism=self.mechanism, sasl_plain_username=self.username, sasl_plain_password=self.password
            )
        if self.protocol.endswith("SSL"):
            conf["ssl_context"] = self.ssl_context()
        return conf


def _values(n: int) -> list[bytes]:
    tag = uuid.uuid4().hex[:6]
    return [b"%s-%d" % (tag.encode(), i) for i in range(n)]


def kafka_python_round_trip(auth: Auth, topic: str, n: int = 200) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    values = _values(n)
    producer = KafkaProducer(acks="all", **auth.kafka_python())
    try:
        for v in values:
            producer.send(topic, v, partition=0)
        producer.flush(30)
    finally:
        producer.close(10)
    consumer = KafkaConsumer(enable_auto_commit=False, group_id=None, **auth.kafka_python())
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        while not set(values) <= set(got) and time.monotonic() < deadline:
            for recs in consumer.poll(timeout_ms=500).values():
                got += [r.value for r in recs]
    finally:
        consumer.close()
    return [v for v in got if v in set(values)]


def aiokafka_round_trip(auth: Auth, topic: str, n: int = 200) -> list[bytes]:
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    values = _values(n)
    conf: dict = {"bootstrap_servers": auth.bootstrap, "security_protocol": auth.protocol}
    if auth.mechanism:
        conf.update(sasl_mechanism=auth.mechanism, sasl_plain_username=auth.username, sasl_plain_password=auth.password)
    if auth.protocol.endswith("SSL"):
        conf["ssl_context"] = auth.ssl_context()

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(acks="all", **conf)
        await producer.start()
        try:
            for v in values:
                await producer.send(topic, v, partition=0)
            await producer.flush()
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(enable_auto_commit=False, **conf)
        await consumer.start()
        got: list[bytes] = []
        try:
            tp = TopicPartition(topic, 0)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            deadline = time.monotonic() + 60
            while not set(values) <= set(got) and time.monotonic() < deadline:
                for recs in (await consumer.getmany(timeout_ms=500)).values():
                    got += [r.value for r in recs]
        finally:
            await consumer.stop()
        return got

    got = asyncio.run(run())
    return [v for v in got if v in set(values)]


def confluent_round_trip(auth: Auth, topic: str, n: int = 200, extra: dict | None = None) -> list[bytes]:
    """``extra``: more librdkafka settings for both clients (e.g. ``oauth_cb``)."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    values = _values(n)
    errors: list = []
    producer = Producer({**auth.librdkafka(), **(extra or {}), "acks": "all", "error_cb": errors.append})
    for v in values:
        producer.produce(topic, v, partition=0, on_delivery=lambda err, msg: err and errors.append(err))
    left = producer.flush(30)
    if left or errors:
        raise RuntimeError(f"confluent-kafka: {left} undelivered, errors {errors[:3]}")
    consumer = Consumer(
        {
            **auth.librdkafka(),
            **(extra or {}),
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    got: list[bytes] = []
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 60
        while not set(values) <= set(got) and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.5):
                if msg.error() is None:
                    got.append(msg.value())
    finally:
        consumer.close()
    return [v for v in got if v in set(values)]


def kcat_environment(directory: Path) -> dict[str, str]:
    """The environment to run kcat on the librdkafka confluent-kafka ships (2.16 here) rather than the system's.

    Debian's kcat 1.7.1 links librdkafka 2.0.2, whose SCRAM client-final message repeats the client nonce before
    the server-first nonce (``r=<cnonce><cnonce><snonce>``, fixed in librdkafka 2.6.1): Apache Kafka 4 refuses it,
    Kafka 3.9 and kafkalog accept it. librdkafka keeps its ABI, so kcat runs unchanged on the newer library,
    linked as ``librdkafka.so.1`` in ``directory`` (tests/compat compares the two).
    """
    import confluent_kafka

    libs = Path(confluent_kafka.__file__).parent.parent / "confluent_kafka.libs"
    bundled = sorted(libs.glob("librdkafka*.so.1"))
    if not bundled:
        raise RuntimeError(f"no librdkafka in {libs}: cannot run kcat on a current librdkafka")
    link = directory / "librdkafka.so.1"
    if not link.exists():
        link.symlink_to(bundled[0])
    return {**os.environ, "LD_LIBRARY_PATH": str(directory)}


def kcat_round_trip(auth: Auth, topic: str, n: int = 200) -> list[bytes]:
    kcat = shutil.which("kcat")
    if kcat is None:
        raise RuntimeError("kcat is not installed (make install installs it)")
    env = None  # the system's librdkafka, as kcat users run it
    values = _values(n)
    settings = [arg for k, v in auth.librdkafka().items() if k != "bootstrap.servers" for arg in ("-X", f"{k}={v}")]
    base = [kcat, "-b", auth.bootstrap, *settings]
    produced = subprocess.run(
        [*base, "-P", "-t", topic, "-p", "0"],
        input=b"\n".join(values) + b"\n",
        capture_output=True,
        timeout=60,
        env=env,
    )
    if produced.returncode != 0:
        raise RuntimeError(f"kcat -P failed: {produced.stderr.decode(errors='replace')[-500:]}")
    consumed = subprocess.run(
        [*base, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q"], capture_output=True, timeout=60, env=env
    )
    if consumed.returncode != 0:
        raise RuntimeError(f"kcat -C failed: {consumed.stderr.decode(errors='replace')[-500:]}")
    got = consumed.stdout.split(b"\n")
    return [v for v in got if v in set(values)]
