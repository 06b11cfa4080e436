"""A broker that authorizes, for the authorization tests: a SASL_PLAINTEXT (PLAIN) client listener whose JAAS
configuration knows ``admin`` (a super user), ``alice``, ``bob`` and a pool of fresh users ``u0``..``u399``, a
PLAINTEXT inter-broker listener (its principal ``User:ANONYMOUS`` is a super user too, as a Kafka deployment with a
PLAINTEXT replication listener must list it), ``authorizer.class.name=kafka.security.authorizer.AclAuthorizer``.

``start_secured`` runs one in process (``EmbeddedBroker``); ``secured_config`` is the configuration, also for
broker processes (``EmbeddedCluster``: pass ``listeners`` with ``{host}``/``{port}`` placeholders).
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass
from typing import Any

from broker.server import EmbeddedBroker

from .acl_clients import AclSetter, User

__all__ = ["AUTHORIZER", "JAAS", "PASSWORDS", "POOL", "Secured", "secured_config", "start_secured", "unique"]

AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
POOL = 400
PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"} | {
    f"u{i}": f"u{i}-secret" for i in range(POOL)
}
JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required " + " ".join(
    f'user_{name}="{password}"' for name, password in PASSWORDS.items()
)
JAAS += ' username="admin" password="admin-secret";'


def secured_config(**overrides: str) -> dict[str, str]:
    """A broker with a SASL_PLAINTEXT (PLAIN) client listener and a PLAINTEXT inter-broker listener, authorizing."""
    return {
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "authorizer.class.name": AUTHORIZER,
        "super.users": "User:admin;User:ANONYMOUS",
        "auto.create.topics.enable": "true",
        "num.partitions": "1",
        "offsets.topic.num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        **overrides,
    }


@dataclass
class Secured:
    """An authorizing broker (``EmbeddedBroker``, or Kafka's ``KafkaBroker`` in tests/compat) and what tests ask it."""

    broker: Any
    bootstrap: str
    acls: AclSetter
    _next_user: itertools.count

    def user(self, name: str | None = None) -> User:
        """A named user, or a fresh one from the pool (no ACL names it yet)."""
        if name is None:
            n = next(self._next_user)
            assert n < POOL, "the JAAS user pool is used up: raise POOL"
            name = f"u{n}"
        return User(self.bootstrap, name, PASSWORDS[name])

    @property
    def admin(self) -> User:
        return self.user("admin")

    def topic(self, prefix: str = "acl", *, records: int = 1) -> str:
        """A new topic (one partition) holding ``records`` records, made by the admin."""
        from spark_kafkalog.client import AdminClient, NewTopic, Producer

        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        with AdminClient(self.admin.kafka_names()) as admin:
            admin.create_topics([NewTopic(name, 1, 1)])
        if records:
            with Producer(self.admin.kafka_names(), acks="all") as producer:
                for i in range(records):
                    producer.send(name, b"r%d" % i, partition=0)
                producer.flush(30)
        return name


def start_secured(tmp_path_factory, zookeeper_connect: str, **overrides: str) -> Secured:
    config: dict[str, Any] = secured_config(**overrides)
    broker = EmbeddedBroker(0, zookeeper_connect=zookeeper_connect, log_dir=tmp_path_factory.mktemp("authz"), **config)
    broker.start()
    inner = broker.broker
    assert inner is not None
    bootstrap = f"127.0.0.1:{inner.bound_ports['SASL_PLAINTEXT']}"
    admin = User(bootstrap, "admin", PASSWORDS["admin"])
    return Secured(broker, bootstrap, AclSetter(admin, [inner.authorizer]), itertools.count())


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
