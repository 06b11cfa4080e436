"""TLS material for tests (no pytest import): a local CA, broker, client and wrong-host certificates in every store format.

Use it as a session fixture in a conftest or test module::

    from tests.security.certs import tls_material as _tls_material
    tls_material = pytest.fixture(scope="session")(_tls_material)

or call ``build_tls_material(directory)`` directly. Building needs the JDK's ``keytool`` (JKS stores and the
keytool-made PKCS12 stores, as Kafka users make them); about 2-4 s on this machine.

``TlsMaterial`` (frozen) holds, all under ``directory``; every store and encrypted key uses ``PASSWORD``
("kafkalog-test", store password = key password):

* ``ca``: the ``LocalCA`` (CN=kafkalog test CA); ``ca_pem``: its certificate (= the PEM truststore, librdkafka's
  ``ssl.ca.location``);
* ``truststore_pem`` (= ``ca_pem``), ``truststore_p12`` (keytool, PKCS12, alias ``caroot``), ``truststore_jks``
  (keytool, JKS, alias ``caroot``);
* ``broker``: ``IssuedCertificate`` CN=localhost, SAN DNS:localhost + IP:127.0.0.1, serverAuth+clientAuth;
  ``broker_cert_pem`` (leaf), ``broker_chain_pem`` (leaf + CA), ``broker_key_pem`` (unencrypted PKCS#8),
  ``broker_key_encrypted_pem`` (PKCS#8 encrypted with PASSWORD, PBES2/AES-256), ``broker_keystore_pem`` (Kafka's
  PEM keystore: the key encrypted for Java (PBE-SHA1-3DES) + chain in one file, read with ``ssl.key.password``), ``broker_keystore_p12`` (keytool,
  PKCS12), ``broker_keystore_jks`` (keytool, JKS); alias ``localhost``;
* ``client``: CN=alice,OU=Eng,O=Org,L=City,ST=State,C=US (``CLIENT_DN``), clientAuth only, no SAN;
  ``client_cert_pem``, ``client_chain_pem``, ``client_key_pem``, ``client_key_encrypted_pem``,
  ``client_keystore_p12`` (written by ``cryptography``, as librdkafka users bring them), ``client_keystore_jks``
  (keytool); alias ``alice``;
* ``wrong_host``: CN=wrong.example, SAN DNS:wrong.example only (a server cert that fails hostname checks for
  localhost/127.0.0.1 but chains to the same CA); ``wrong_host_chain_pem``, ``wrong_host_key_pem``,
  ``wrong_host_keystore_p12`` (cryptography).

``tls_handshake(server_context, client_context, server_hostname="localhost")`` runs a real handshake over a
socketpair and returns a ``HandshakeResult`` (each side's error or peer certificate DER, version, cipher).
"""

from __future__ import annotations

import socket
import ssl
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark_kafkalog.security.certificates import IssuedCertificate, LocalCA

__all__ = [
    "CLIENT_DN",
    "PASSWORD",
    "HandshakeResult",
    "TlsMaterial",
    "build_tls_material",
    "tls_handshake",
    "tls_material",
]

PASSWORD = "kafkalog-test"
CLIENT_DN = "CN=alice,OU=Eng,O=Org,L=City,ST=State,C=US"


@dataclass(frozen=True)
class TlsMaterial:
    """Paths and objects described in the module docstring."""

    directory: Path
    password: str
    ca: LocalCA
    ca_pem: Path
    truststore_pem: Path
    truststore_p12: Path
    truststore_jks: Path
    broker: IssuedCertificate
    broker_cert_pem: Path
    broker_chain_pem: Path
    broker_key_pem: Path
    broker_key_encrypted_pem: Path
    broker_keystore_pem: Path
    broker_keystore_p12: Path
    broker_keystore_jks: Path
    client: IssuedCertificate
    client_dn: str
    client_cert_pem: Path
    client_chain_pem: Path
    client_key_pem: Path
    client_key_encrypted_pem: Path
    client_keystore_p12: Path
    client_keystore_jks: Path
    wrong_host: IssuedCertificate
    wrong_host_chain_pem: Path
    wrong_host_key_pem: Path
    wrong_host_keystore_p12: Path


def build_tls_material(directory: Path) -> TlsMaterial:
    """Make a CA and the certificates and stores listed in the module docstring under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = LocalCA.create("kafkalog test CA")
    ca_pem = ca.write_pem(directory / "ca.crt")
    truststore_p12 = ca.write_truststore(directory / "truststore.p12", PASSWORD, store_type="PKCS12")
    truststore_jks = ca.write_truststore(directory / "truststore.jks", PASSWORD, store_type="JKS")

    broker = ca.issue("localhost", hosts=("localhost", "127.0.0.1"), server=True, client=True)
    broker_files = broker.write_pem_files(directory, stem="broker", key_password=PASSWORD)
    assert broker_files.encrypted_private_key is not None
    broker_keystore_pem = directory / "broker-keystore.pem"
    broker_keystore_pem.write_bytes(broker.keystore_pem(PASSWORD))
    broker_keystore_p12 = broker.write_keystore(
        directory / "broker.keystore.p12", PASSWORD, store_type="PKCS12", alias="localhost", tool="keytool"
    )
    broker_keystore_jks = broker.write_jks_keystore(directory / "broker.keystore.jks", PASSWORD, alias="localhost")

    client = ca.issue(
        "alice",
        hosts=(),
        server=False,
        client=True,
        organizational_unit="Eng",
        organization="Org",
        locality="City",
        state="State",
        country="US",
    )
    client_files = client.write_pem_files(directory, stem="client", key_password=PASSWORD)
    assert client_files.encrypted_private_key is not None
    client_keystore_p12 = client.write_keystore(directory / "client.keystore.p12", PASSWORD, alias="alice")
    client_keystore_jks = client.write_jks_keystore(directory / "client.keystore.jks", PASSWORD, alias="alice")

    wrong = ca.issue("wrong.example", hosts=("wrong.example",), server=True, client=False)
    wrong_files = wrong.write_pem_files(directory, stem="wrong-host")
    wrong_keystore_p12 = wrong.write_keystore(directory / "wrong-host.keystore.p12", PASSWORD)

    return TlsMaterial(
        directory=directory,
        password=PASSWORD,
        ca=ca,
        ca_pem=ca_pem,
        truststore_pem=ca_pem,
        truststore_p12=truststore_p12,
        truststore_jks=truststore_jks,
        broker=broker,
        broker_cert_pem=broker_files.certificate,
        broker_chain_pem=broker_files.chain,
        broker_key_pem=broker_files.private_key,
        broker_key_encrypted_pem=broker_files.encrypted_private_key,
        broker_keystore_pem=broker_keystore_pem,
        broker_keystore_p12=broker_keystore_p12,
        broker_keystore_jks=broker_keystore_jks,
        client=client,
        client_dn=CLIENT_DN,
        client_cert_pem=client_files.certificate,
        client_chain_pem=client_files.chain,
        client_key_pem=client_files.private_key,
        client_key_encrypted_pem=client_files.encrypted_private_key,
        client_keystore_p12=client_keystore_p12,
        client_keystore_jks=client_keystore_jks,
        wrong_host=wrong,
        wrong_host_chain_pem=wrong_files.chain,
        wrong_host_key_pem=wrong_files.private_key,
        wrong_host_keystore_p12=wrong_keystore_p12,
    )


_BUILT: dict[str, TlsMaterial] = {}


def tls_material(tmp_path_factory: Any) -> TlsMaterial:
    """Fixture body (wrap with ``pytest.fixture(scope="session")``): ``build_tls_material`` in a temp dir.

    Built once per pytest session (keyed by the session's base temp dir), however many modules wrap it.
    """
    key = str(tmp_path_factory.getbasetemp())
    if key not in _BUILT:
        _BUILT[key] = build_tls_material(Path(tmp_path_factory.mktemp("tls")))
    return _BUILT[key]


@dataclass(frozen=True)
class HandshakeResult:
    """What each side of ``tls_handshake`` saw: the peer certificate (DER or None), version, cipher, or the error."""

    client_error: BaseException | None
    server_error: BaseException | None
    client_peer_der: bytes | None = None
    server_peer_der: bytes | None = None
    version: str | None = None
    cipher: str | None = None

    @property
    def ok(self) -> bool:
        return self.client_error is None and self.server_error is None


def tls_handshake(
    server_context: ssl.SSLContext,
    client_context: ssl.SSLContext,
    server_hostname: str | None = "localhost",
    timeout: float = 10.0,
) -> HandshakeResult:
    """A real TLS handshake over a socketpair (server side in a thread), then one ping/pong so that TLS 1.3's
    post-handshake client-certificate verdict reaches the client; errors are captured, never raised."""
    server_sock, client_sock = socket.socketpair()
    server_sock.settimeout(timeout)
    client_sock.settimeout(timeout)
    server_out: dict[str, Any] = {}

    def serve() -> None:
        try:
            with server_context.wrap_socket(server_sock, server_side=True) as tls:
                server_out["peer"] = tls.getpeercert(binary_form=True)
                if tls.recv(4) == b"ping":
                    tls.sendall(b"pong")
        except BaseException as e:  # reported to the test through the result
            server_out["error"] = e
        finally:
            server_sock.close()

    thread = threading.Thread(target=serve, name="tls-handshake-server", daemon=True)
    thread.start()
    client_error: BaseException | None = None
    client_peer = version = cipher = None
    try:
        with client_context.wrap_socket(client_sock, server_hostname=server_hostname) as tls:
            client_peer = tls.getpeercert(binary_form=True)
            version = tls.version()
            cipher_info = tls.cipher()
            cipher = cipher_info[0] if cipher_info else None
            tls.sendall(b"ping")
            reply = tls.recv(4)
            if reply != b"pong":
                raise ConnectionError(f"server answered {reply!r} instead of b'pong'")
    except BaseException as e:
        client_error = e
    finally:
        client_sock.close()
    thread.join(timeout)
    return HandshakeResult(client_error, server_out.get("error"), client_peer, server_out.get("peer"), version, cipher)
