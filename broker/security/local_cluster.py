"""``kafkalog cluster up --security``: a local CA, broker certificates and a SCRAM admin, made once per data dir.

Layout under ``<data dir>/security/`` (made on the first secured run, reused by later ones; private files 0600)::

    ca.pem                 the local CA's certificate (clients trust it: ssl.truststore.location, ssl.ca.location)
    ca-key.pem             the CA's key (PKCS#8), kept so that later runs can issue certificates for new brokers
    broker.pem             the brokers' keystore, Kafka's PEM form: the key, then the chain (ssl.keystore.type=PEM)
    truststore.jks         the CA as a JKS truststore for Java clients (only when the JDK's keytool is there)
    admin.password         the generated password of the SCRAM user ``admin`` (also the inter-broker identity)
    client.properties      the settings a client uses, in Kafka's names (``--command-config``, Java tools)
    librdkafka.properties  the same in librdkafka's names (``kcat -F``, confluent-kafka)

Every broker gets one listener, ``SASL_SSL://{host}:{port}``, for clients and replication: SCRAM-SHA-512 and
SCRAM-SHA-256, the broker certificate (CN=localhost, SANs localhost and 127.0.0.1), and the inter-broker identity
``admin`` over SCRAM-SHA-512. The ``admin`` credentials are written to ZooKeeper before the brokers start, as
``kafka-configs --zookeeper ... --entity-type users`` writes them (``write_admin_credentials``): a broker never
starts without the identity it replicates with.

ACLs are on (``authorizer.class.name``, Kafka's AclAuthorizer semantics) with ``User:admin`` in ``super.users``:
the brokers' own requests (replica fetches need ClusterAction on the cluster, controlled shutdown and
transaction markers too) and the admin's are allowed everything, as Kafka's docs advise for the inter-broker
principal; any other user needs ACLs (``kafkalog acls --add``).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from spark_kafkalog.security.certificates import KeytoolError, LocalCA, find_keytool
from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism

if TYPE_CHECKING:
    from broker.cluster.registry import ClusterRegistry

__all__ = ["ADMIN_USER", "LocalClusterSecurity"]

ADMIN_USER = "admin"
LISTENER = "SASL_SSL"
INTER_BROKER_MECHANISM = "SCRAM-SHA-512"
AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
SCRAM_ITERATIONS = 8192
_KEY_PASSWORD_BYTES = 24


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _jaas(password: str) -> str:
    return (
        f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{ADMIN_USER}" '
        f'password="{password}";'
    )


@dataclass(frozen=True)
class LocalClusterSecurity:
    """The security material of one data dir (see the module docstring); ``prepare`` makes or reloads it."""

    directory: Path
    admin_password: str = field(repr=False)
    key_password: str = field(repr=False)

    @property
    def ca_pem(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def keystore_pem(self) -> Path:
        return self.directory / "broker.pem"

    @property
    def truststore_jks(self) -> Path | None:
        path = self.directory / "truststore.jks"
        return path if path.exists() else None

    @property
    def client_properties(self) -> Path:
        return self.directory / "client.properties"

    @property
    def librdkafka_properties(self) -> Path:
        return self.directory / "librdkafka.properties"

    @classmethod
    def prepare(cls, data_dir: Path, host: str = "127.0.0.1") -> LocalClusterSecurity:
        """Make ``<data_dir>/security`` on the first call, reload it on later ones."""
        directory = data_dir / "security"
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        password_file, key_password_file = directory / "admin.password", directory / "key.password"
        if password_file.exists() and key_password_file.exists() and (directory / "broker.pem").exists():
            return cls(directory, password_file.read_text().strip(), key_password_file.read_text().strip())
        admin_password = secrets.token_urlsafe(18)
        key_password = secrets.token_urlsafe(_KEY_PASSWORD_BYTES)
        ca = LocalCA.create("kafkalog local CA")
        hosts = tuple(dict.fromkeys(("localhost", "127.0.0.1", host)))
        broker = ca.issue("localhost", hosts=hosts, server=True, client=True)
        (directory / "ca.pem").write_bytes(ca.certificate_pem)
        _write_private(directory / "ca-key.pem", ca.private_key_pem_pkcs8(key_password))
        _write_private(directory / "broker.pem", broker.keystore_pem(key_password))
        _write_private(key_password_file, key_password.encode())
        if find_keytool() is not None:
            try:
                ca.write_jks_truststore(directory / "truststore.jks", "kafkalog")
            except KeytoolError:
                pass  # Python and librdkafka clients use ca.pem; Java users can import it themselves
        security = cls(directory, admin_password, key_password)
        _write_private(security.client_properties, security.render_client_properties().encode())
        _write_private(security.librdkafka_properties, security.render_librdkafka_properties().encode())
        _write_private(password_file, admin_password.encode())  # last: its presence means "complete"
        return security

    def broker_config(self) -> dict[str, str]:
        """Broker properties for every broker of the cluster (``{host}``/``{port}`` filled in per broker)."""
        return {
            "listeners": f"{LISTENER}://{{host}}:{{port}}",
            "listener.security.protocol.map": f"{LISTENER}:SASL_SSL",
            "inter.broker.listener.name": LISTENER,
            "sasl.enabled.mechanisms": "SCRAM-SHA-512,SCRAM-SHA-256",
            "sasl.mechanism.inter.broker.protocol": INTER_BROKER_MECHANISM,
            f"listener.name.{LISTENER.lower()}.{INTER_BROKER_MECHANISM.lower()}.sasl.jaas.config": _jaas(
                self.admin_password
            ),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.keystore_pem),
            "ssl.key.password": self.key_password,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca_pem),
            "authorizer.class.name": AUTHORIZER,
            "super.users": f"User:{ADMIN_USER}",  # the inter-broker identity: followers' fetches need ClusterAction
        }

    def client_config(self) -> dict[str, str]:
        """The admin's client settings, Kafka's names (kafkalog's client, Java clients, Spark's ``kafka.`` options)."""
        return {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": INTER_BROKER_MECHANISM,
            "sasl.jaas.config": _jaas(self.admin_password),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca_pem),
        }

    def render_client_properties(self) -> str:
        lines = ["# kafkalog cluster up --security: the admin's client settings (keep this file private)\n"]
        lines += [f"{k}={v}\n" for k, v in self.client_config().items()]
        return "".join(lines)

    def librdkafka_config(self) -> dict[str, str]:
        """The admin's settings in librdkafka's names (confluent-kafka, kcat)."""
        return {
            "security.protocol": "SASL_SSL",
            "sasl.mechanisms": INTER_BROKER_MECHANISM,
            "sasl.username": ADMIN_USER,
            "sasl.password": self.admin_password,
            "ssl.ca.location": str(self.ca_pem),
        }

    def render_librdkafka_properties(self) -> str:
        lines = [
            "# kafkalog cluster up --security: the admin's librdkafka settings (kcat -F; keep this file private)\n"
        ]
        lines += [f"{k}={v}\n" for k, v in self.librdkafka_config().items()]
        return "".join(lines)

    def write_admin_credentials(self, registry: ClusterRegistry) -> None:
        """Store ``admin``'s SCRAM-SHA-256 and -512 credentials in ZooKeeper (``/config/users/admin``)."""
        updates: dict[str, str | None] = {}
        for mechanism in (ScramMechanism.from_name("SCRAM-SHA-256"), ScramMechanism.from_name("SCRAM-SHA-512")):
            credential = ScramCredential.from_password(mechanism, self.admin_password, SCRAM_ITERATIONS)
            updates[mechanism.mechanism_name] = credential.to_kafka_string()
        registry.alter_user_config(ADMIN_USER, updates)

    def summary(self, bootstrap_servers: str) -> list[str]:
        """What ``cluster up --security`` prints: where the settings are and how to use them (no password)."""
        java = f", Java truststore {self.truststore_jks} (password kafkalog)" if self.truststore_jks else ""
        return [
            f"security: SASL_SSL with SCRAM-SHA-512/256; CA {self.ca_pem}{java}",
            f"security: admin client settings in {self.client_properties} (user {ADMIN_USER}, password in "
            f"{self.directory / 'admin.password'})",
            f"security: e.g. kafkalog topics list --bootstrap-server {bootstrap_servers} "
            f"--command-config {self.client_properties}",
            f"security: librdkafka's names in {self.librdkafka_properties}, e.g. kcat -F {self.librdkafka_properties} "
            f"-b {bootstrap_servers} -L",
        ]
