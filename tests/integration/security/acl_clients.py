"""What the authorization tests do with each client library, reduced to Kafka error codes.

A ``Driver`` is one client library (kafka-python, confluent-kafka, kafkalog's own client) logged in as one SASL
PLAIN user; each operation returns ``0`` when it succeeded, else the Kafka error code the library reported
(29 TOPIC_, 30 GROUP_, 31 CLUSTER_, 53 TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ...), or ``NO_ANSWER`` (-1) when the
library neither succeeded nor reported an error within its time limit (a library retrying an authorization error
forever ends there: the test then fails naming -1). Every operation gives up within about 15 s.

``SaslWire`` is a raw protocol peer logged in with SASL PLAIN, optionally from a chosen source address (the
host-specific ACL tests connect from 127.0.0.2; every 127/8 address is the loopback on Linux).

``AclSetter`` creates and deletes ACLs: over the wire with kafkalog's ``AdminClient.create_acls``/``delete_acls``
as the admin (a super user), then waits until the broker's ACL cache holds the change (ACLs reach the cache
through ZooKeeper's change notices, asynchronously, as in Kafka).
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.protocol import ApiKey
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from tests.broker.network.secure import login
from tests.broker.wire import Wire
from tests.waiting import wait_until

__all__ = [
    "DRIVERS",
    "NO_ANSWER",
    "AclSetter",
    "ConfluentDriver",
    "Driver",
    "KafkaPythonDriver",
    "KafkalogDriver",
    "SaslWire",
    "User",
    "acl",
]

NO_ANSWER = -1
LIMIT_S = 15.0


@dataclass(frozen=True)
class User:
    """A SASL PLAIN login on the broker's SASL_PLAINTEXT listener at ``bootstrap``."""

    bootstrap: str
    name: str
    password: str = field(repr=False)

    @property
    def principal(self) -> str:
        return f"User:{self.name}"

    def kafka_names(self) -> dict[str, str]:
        """Kafka's (and kafkalog's) client settings."""
        return {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": (
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'username="{self.name}" password="{self.password}";'
            ),
        }

    def librdkafka(self) -> dict[str, Any]:
        return {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": self.name,
            "sasl.password": self.password,
        }

    def kafka_python(self) -> dict[str, Any]:
        return {
            "bootstrap_servers": self.bootstrap,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN",
            "sasl_plain_username": self.name,
            "sasl_plain_password": self.password,
        }


def acl(
    principal: str,
    operation: AclOperation,
    resource_type: ResourceType,
    name: str,
    *,
    pattern: PatternType = PatternType.LITERAL,
    host: str = "*",
    permission: AclPermissionType = AclPermissionType.ALLOW,
) -> AclBinding:
    return AclBinding(
        ResourcePattern(resource_type, name, pattern), AccessControlEntry(principal, host, operation, permission)
    )


# -- raw peer ------------------------------------------------------------------------------------------------


class SaslWire(Wire):
    """A ``Wire`` logged in with SASL PLAIN (SaslHandshake v1, SaslAuthenticate v2), from ``source_host``."""

    def __init__(self, user: User, *, source_host: str | None = None, timeout: float = 10.0) -> None:
        host, port = user.bootstrap.rsplit(":", 1)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        if source_host is not None:
            sock.bind((source_host, 0))
        sock.connect((host, int(port)))
        self.sock = sock
        self._cid = 0
        answer = login(self, user.name, user.password)
        if answer.error_code != 0:
            sock.close()
            raise ConnectionError(f"SASL PLAIN login of {user.name} failed: {answer.error_message}")


def metadata_topic_error(wire: Wire, topic: str, *, allow_auto_create: bool = False) -> int:
    """The error code of ``topic`` in a Metadata v9 answer for just that topic."""
    from spark_kafkalog.protocol import API_BY_KEY

    M = API_BY_KEY[ApiKey.METADATA].Request
    md = wire.call(
        ApiKey.METADATA,
        9,
        M(
            topics=[M.MetadataRequestTopic(name=topic)],
            allow_auto_topic_creation=allow_auto_create,
            include_topic_authorized_operations=False,
        ),
    )
    (t,) = md.topics
    return t.error_code


# -- ACLs ----------------------------------------------------------------------------------------------------


class AclSetter:
    """Creates and deletes ACLs through kafkalog's AdminClient as a super user, then waits for ``caches``.

    ``caches`` are the in-process authorizers that must see the change (each broker's ``AclAuthorizer``); with
    none given, no waiting (the caller polls the behaviour itself, e.g. on a broker in another process).
    """

    def __init__(self, admin_user: User, caches: Iterable[Any] = ()) -> None:
        self.admin_user = admin_user
        self.caches = list(caches)

    def _admin(self):
        from spark_kafkalog.client import AdminClient

        return AdminClient(self.admin_user.kafka_names())

    def add(self, *bindings: AclBinding) -> None:
        with self._admin() as admin:
            admin.create_acls(list(bindings))
        for cache in self.caches:
            wait_until(
                _holds(cache, bindings, present=True),
                15,
                f"the broker's ACL cache to hold {[str(b.pattern) for b in bindings]}",
            )

    def remove(self, *bindings: AclBinding) -> None:
        from spark_kafkalog.security.acl import AccessControlEntryFilter

        filters = [
            AclBindingFilter(
                ResourcePatternFilter(b.pattern.resource_type, b.pattern.name, b.pattern.pattern_type),
                AccessControlEntryFilter(b.entry.principal, b.entry.host, b.entry.operation, b.entry.permission_type),
            )
            for b in bindings
        ]
        with self._admin() as admin:
            admin.delete_acls(filters)
        for cache in self.caches:
            wait_until(
                _holds(cache, bindings, present=False),
                15,
                f"the broker's ACL cache to drop {[str(b.pattern) for b in bindings]}",
            )


def _holds(cache: Any, bindings: tuple[AclBinding, ...], *, present: bool) -> Callable[[], bool]:
    """Whether ``cache`` (an ``AclAuthorizer``) holds all of ``bindings`` (``present``) or none of them."""

    def check() -> bool:
        held = set(cache.acls(AclBindingFilter()))
        return set(bindings) <= held if present else not set(bindings) & held

    return check


# -- drivers -------------------------------------------------------------------------------------------------


def _value() -> bytes:
    return f"v-{uuid.uuid4().hex[:8]}".encode()


class Driver:
    """One client library as one user; see the module docstring for what the operations return."""

    name = ""

    def __init__(self, user: User) -> None:
        self.user = user

    def produce(self, topic: str) -> int:
        """One record, acks=all, idempotence off."""
        raise NotImplementedError

    def idempotent_produce(self, topic: str) -> int:
        """One record from an idempotent producer (InitProducerId first)."""
        raise NotImplementedError

    def transactional_produce(self, transactional_id: str, topic: str) -> int:
        """init_transactions, one record in a transaction, commit."""
        raise NotImplementedError

    def consume_group(self, topic: str, group: str) -> int:
        """Subscribe as a member of ``group``, read the first record of ``topic`` and commit its offset."""
        raise NotImplementedError

    def list_topics(self) -> set[str]:
        """The topics an all-topics Metadata request shows."""
        raise NotImplementedError

    def create_topic(self, topic: str) -> int:
        raise NotImplementedError

    def delete_topic(self, topic: str) -> int:
        raise NotImplementedError


class KafkaPythonDriver(Driver):
    name = "kafka-python"

    @staticmethod
    def _code(exc: BaseException) -> int:
        errno = getattr(exc, "errno", None)
        if isinstance(errno, int):
            return errno
        raise exc

    def _producer_code(self, topic: str, **extra: Any) -> int:
        from kafka import KafkaProducer

        producer = None
        try:
            producer = KafkaProducer(
                **self.user.kafka_python(), max_block_ms=int(LIMIT_S * 1000), request_timeout_ms=10000, **extra
            )
            if "transactional_id" in extra:
                producer.init_transactions()
                producer.begin_transaction()
            producer.send(topic, _value(), partition=0).get(timeout=LIMIT_S)
            if "transactional_id" in extra:
                producer.commit_transaction()
            return 0
        except Exception as exc:
            from kafka.errors import KafkaTimeoutError

            if isinstance(exc, KafkaTimeoutError):
                return NO_ANSWER
            return self._code(exc)
        finally:
            if producer is not None:
                producer.close(timeout=5)

    def produce(self, topic: str) -> int:
        return self._producer_code(topic, acks="all", enable_idempotence=False)

    def idempotent_produce(self, topic: str) -> int:
        return self._producer_code(topic, acks="all", enable_idempotence=True)

    def transactional_produce(self, transactional_id: str, topic: str) -> int:
        return self._producer_code(topic, transactional_id=transactional_id)

    def consume_group(self, topic: str, group: str) -> int:
        from kafka import KafkaConsumer

        consumer = KafkaConsumer(
            **self.user.kafka_python(), group_id=group, auto_offset_reset="earliest", enable_auto_commit=False
        )
        try:
            consumer.subscribe([topic])
            deadline = time.monotonic() + LIMIT_S
            while time.monotonic() < deadline:
                if consumer.poll(timeout_ms=500, max_records=1):
                    consumer.commit()
                    return 0
            return NO_ANSWER
        except Exception as exc:
            return self._code(exc)
        finally:
            consumer.close(autocommit=False)

    def list_topics(self) -> set[str]:
        from kafka import KafkaConsumer

        consumer = KafkaConsumer(**self.user.kafka_python())
        try:
            return set(consumer.topics())
        finally:
            consumer.close()

    def _admin_code(self, call: Callable[[Any], Any]) -> int:
        from kafka import KafkaAdminClient

        admin = KafkaAdminClient(**self.user.kafka_python(), request_timeout_ms=10000)
        try:
            call(admin)
            return 0
        except Exception as exc:
            return self._code(exc)
        finally:
            admin.close()

    def create_topic(self, topic: str) -> int:
        from kafka.admin import NewTopic

        return self._admin_code(lambda a: a.create_topics([NewTopic(topic, 1, 1)], timeout_ms=10000))

    def delete_topic(self, topic: str) -> int:
        return self._admin_code(lambda a: a.delete_topics([topic], timeout_ms=10000))


class ConfluentDriver(Driver):
    name = "confluent-kafka"

    def _producer_code(self, topic: str, **extra: Any) -> int:
        from confluent_kafka import KafkaException, Producer

        results: list[int] = []
        producer = Producer({**self.user.librdkafka(), "acks": "all", "message.timeout.ms": 12000, **extra})
        try:
            if "transactional.id" in extra:
                producer.init_transactions(LIMIT_S)
                producer.begin_transaction()
            producer.produce(
                topic, _value(), partition=0, on_delivery=lambda err, msg: results.append(err.code() if err else 0)
            )
            producer.flush(LIMIT_S)
            if "transactional.id" in extra and results == [0]:
                producer.commit_transaction(LIMIT_S)
        except KafkaException as exc:
            return exc.args[0].code()
        return results[0] if results else NO_ANSWER

    def produce(self, topic: str) -> int:
        return self._producer_code(topic, **{"enable.idempotence": False})

    def idempotent_produce(self, topic: str) -> int:
        return self._producer_code(topic, **{"enable.idempotence": True})

    def transactional_produce(self, transactional_id: str, topic: str) -> int:
        return self._producer_code(topic, **{"transactional.id": transactional_id})

    def consume_group(self, topic: str, group: str) -> int:
        from confluent_kafka import Consumer, KafkaException

        consumer = Consumer(
            {
                **self.user.librdkafka(),
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": 6000,
            }
        )
        try:
            consumer.subscribe([topic])
            deadline = time.monotonic() + LIMIT_S
            while time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is None:
                    continue
                error = msg.error()
                if error is not None:
                    if error.code() in (29, 30, 31):
                        return error.code()
                    continue  # partition EOF and the like
                consumer.commit(message=msg, asynchronous=False)
                return 0
            return NO_ANSWER
        except KafkaException as exc:
            return exc.args[0].code()
        finally:
            consumer.close()

    def list_topics(self) -> set[str]:
        from confluent_kafka.admin import AdminClient

        return set(AdminClient(self.user.librdkafka()).list_topics(timeout=LIMIT_S).topics)

    def _admin_code(self, futures: dict) -> int:
        from confluent_kafka import KafkaException

        try:
            for future in futures.values():
                future.result(LIMIT_S)
            return 0
        except KafkaException as exc:
            return exc.args[0].code()

    def create_topic(self, topic: str) -> int:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient(self.user.librdkafka())
        return self._admin_code(admin.create_topics([NewTopic(topic, 1, 1)], request_timeout=10))

    def delete_topic(self, topic: str) -> int:
        from confluent_kafka.admin import AdminClient

        admin = AdminClient(self.user.librdkafka())
        return self._admin_code(admin.delete_topics([topic], request_timeout=10))


class KafkalogDriver(Driver):
    name = "kafkalog"

    @staticmethod
    def _code(exc: BaseException) -> int:
        from spark_kafkalog.client import KafkaClientError, KafkaTimeoutError

        if isinstance(exc, KafkaTimeoutError):
            return NO_ANSWER
        if isinstance(exc, KafkaClientError) and exc.error_code is not None:
            return int(exc.error_code)
        raise exc

    def _conf(self, **extra: Any) -> dict[str, Any]:
        return {**self.user.kafka_names(), "request.timeout.ms": 10000, **extra}

    def _producer_code(self, topic: str, **extra: Any) -> int:
        from spark_kafkalog.client import Producer

        try:
            with Producer(self._conf(**{"delivery.timeout.ms": 12000, "max.block.ms": 12000, **extra})) as producer:
                if "transactional.id" in extra:
                    producer.init_transactions(LIMIT_S)
                    producer.begin_transaction()
                producer.send(topic, _value(), partition=0).result(LIMIT_S)
                if "transactional.id" in extra:
                    producer.commit_transaction(LIMIT_S)
            return 0
        except Exception as exc:
            return self._code(exc)

    def produce(self, topic: str) -> int:
        return self._producer_code(topic, acks="all", **{"enable.idempotence": False})

    def idempotent_produce(self, topic: str) -> int:
        return self._producer_code(topic, acks="all", **{"enable.idempotence": True})

    def transactional_produce(self, transactional_id: str, topic: str) -> int:
        return self._producer_code(topic, **{"transactional.id": transactional_id})

    def consume_group(self, topic: str, group: str) -> int:
        from spark_kafkalog.client import Consumer

        try:
            with Consumer(self._conf(**{"group.id": group, "auto.offset.reset": "earliest"})) as consumer:
                consumer.subscribe([topic])
                deadline = time.monotonic() + LIMIT_S
                while time.monotonic() < deadline:
                    if consumer.poll(timeout_ms=500, max_records=1):
                        consumer.commit()
                        return 0
                return NO_ANSWER
        except Exception as exc:
            return self._code(exc)

    def list_topics(self) -> set[str]:
        from spark_kafkalog.client import AdminClient

        with AdminClient(self._conf()) as admin:
            return set(admin.list_topics())

    def _admin_code(self, call: Callable[[Any], Any]) -> int:
        from spark_kafkalog.client import AdminClient

        try:
            with AdminClient(self._conf()) as admin:
                call(admin)
            return 0
        except Exception as exc:
            return self._code(exc)

    def create_topic(self, topic: str) -> int:
        from spark_kafkalog.client import NewTopic

        return self._admin_code(lambda a: a.create_topics([NewTopic(topic, 1, 1)]))

    def delete_topic(self, topic: str) -> int:
        return self._admin_code(lambda a: a.delete_topics([topic]))


DRIVERS: dict[str, type[Driver]] = {d.name: d for d in (KafkaPythonDriver, ConfluentDriver, KafkalogDriver)}
