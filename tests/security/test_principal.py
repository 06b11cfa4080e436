"""SSL principals: Java's RFC 2253 DN form, Kafka's ssl.principal.mapping.rules, and the principal of a real mTLS
handshake."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from spark_kafkalog.security import SecurityConfigError
from spark_kafkalog.security.principal import ANONYMOUS, NoMatchingRule, SslPrincipalMapper, ssl_principal, subject_dn
from spark_kafkalog.security.ssl_context import SslSettings, client_context, server_context
from tests.security.certs import CLIENT_DN, PASSWORD, tls_handshake
from tests.security.certs import tls_material as _tls_material

tls_material = pytest.fixture(scope="session")(_tls_material)

DN = "CN=alice,OU=Eng,O=Org,L=City,ST=State,C=US"


@pytest.mark.parametrize(
    ("rules", "dn", "expected"),
    [
        ("DEFAULT", DN, DN),
        ("RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/L", DN, "alice@eng"),
        ("RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/U", DN, "ALICE@ENG"),
        ("RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/", DN, "alice@Eng"),
        ("RULE:^CN=(.*?),.*$/$1/L", DN, "alice"),
        ("RULE:^CN=bob,.*$/bob/, DEFAULT", DN, DN),  # no match: next rule
        ("RULE:^CN=bob,.*$/bob/,RULE:^CN=(.*?),.*$/$1/U", DN, "ALICE"),
        (
            "  RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L ,  RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/U , DEFAULT  ",
            DN,
            "ALICE@ENG",
        ),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT", "CN=svc,OU=ServiceUsers,O=Org", "svc"),
        ("RULE:^CN=(.*?),OU=(.*?),.*$/$1@$4/", DN, "alice@$4"),  # beyond the groups: literal
        ("RULE:^CN=(.*?),OU=(.*?),.*$/$12/", DN, "alice2"),  # $1 then a literal 2
        ("RULE:^CN=(.*?),OU=(.*?),.*$/$1\\/$2/", DN, "alice/Eng"),  # escaped slash
        ("RULE:^CN=(.*?),OU=(.*?),.*$/\\$1/", DN, "$1"),  # escaped dollar
        ("RULE:^CN=(?<user>[^,]+),.*$/${user}/", DN, "alice"),  # Java named group
        ("RULE:^\\QCN=alice,\\E.*$/matched/", DN, "matched"),  # Java \Q...\E quoting
        ("RULE:^CN=(.*?),.*$/$0/", DN, DN),  # group 0
        ("RULE:.*/X/", "abc", "XX"),  # Java replaceAll also replaces the empty match at the end
        ("RULE:^(.*)$/$1/U,DEFAULT", "cn=Émile", "CN=ÉMILE"),
    ],
)
def test_mapping_rules_table(rules, dn, expected):
    assert SslPrincipalMapper(rules).get_name(dn) == expected


def test_no_rule_applies():
    mapper = SslPrincipalMapper("RULE:^CN=bob,.*$/bob/")
    with pytest.raises(NoMatchingRule, match="No rules apply to CN=alice"):
        mapper.get_name(DN)


@pytest.mark.parametrize(
    "rules",
    [
        "default",
        "DEFAUL",
        "DEFAULT/L",
        "DEFAULT/U",
        "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
        "RULE:CN=(.*?),OU=ServiceUsers.*/$1/L/U",
        "RULE:CN=(.*?),OU=ServiceUsers.*/$1/LU",
        "RULE:CN=(.*?),OU=ServiceUsers.*/L",
        "RULE:CN=(.*?),OU=ServiceUsers.*/U",
        "RULE:CN=((.*?)/$1/",  # bad regex
        "RULE:^CN=alice$/$1/",  # group reference without groups
        "RULE:^CN=(.*)$/${nope}/",
    ],
)
def test_invalid_rules(rules):
    with pytest.raises(SecurityConfigError, match="ssl.principal.mapping.rules"):
        SslPrincipalMapper(rules)


def test_empty_rules_between_commas_are_ignored():
    assert SslPrincipalMapper("DEFAULT,,").get_name("CN=x") == "CN=x"


def name_of(*attributes: tuple[x509.ObjectIdentifier, str]) -> x509.Name:
    return x509.Name([x509.NameAttribute(oid, value) for oid, value in attributes])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            name_of(
                (NameOID.COUNTRY_NAME, "US"),
                (NameOID.STATE_OR_PROVINCE_NAME, "State"),
                (NameOID.LOCALITY_NAME, "City"),
                (NameOID.ORGANIZATION_NAME, "Org"),
                (NameOID.ORGANIZATIONAL_UNIT_NAME, "Eng"),
                (NameOID.COMMON_NAME, "alice"),
            ),
            CLIENT_DN,
        ),
        (name_of((NameOID.COMMON_NAME, "Smith, John")), "CN=Smith\\, John"),
        (
            name_of((NameOID.DOMAIN_COMPONENT, "com"), (NameOID.DOMAIN_COMPONENT, "example"), (NameOID.USER_ID, "u1")),
            "UID=u1,DC=example,DC=com",
        ),
        (
            name_of((NameOID.COMMON_NAME, "bob"), (NameOID.EMAIL_ADDRESS, "bob@example.com")),
            "1.2.840.113549.1.9.1=#16" + f"{len('bob@example.com'):02x}" + b"bob@example.com".hex() + ",CN=bob",
        ),
        (name_of((NameOID.SERIAL_NUMBER, "42"), (NameOID.COMMON_NAME, "dev")), "CN=dev,2.5.4.5=#1302" + b"42".hex()),
    ],
)
def test_subject_dn_matches_java_rfc2253(name, expected):
    assert subject_dn(name) == expected


def self_signed(name: x509.Name) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.DER)


def test_ssl_principal_of_a_certificate_and_of_none():
    der = self_signed(name_of((NameOID.ORGANIZATIONAL_UNIT_NAME, "Ops"), (NameOID.COMMON_NAME, "Carol")))
    assert ssl_principal(der) == "User:CN=Carol,OU=Ops"
    assert ssl_principal(der, "RULE:^CN=(.*?),.*$/$1/L") == "User:carol"
    assert ssl_principal(der, SslPrincipalMapper("RULE:^CN=(.*?),OU=(.*?)$/$2-$1/U")) == "User:OPS-CAROL"
    assert ssl_principal(None) == ANONYMOUS == "User:ANONYMOUS"
    assert ssl_principal(b"", "RULE:^CN=(.*?),.*$/$1/L") == ANONYMOUS
    with pytest.raises(NoMatchingRule):
        ssl_principal(der, "RULE:^CN=nobody$/x/")


def test_principal_from_a_real_mtls_handshake(tls_material):
    server = server_context(
        SslSettings.from_config(
            {
                "ssl.keystore.location": str(tls_material.broker_keystore_jks),
                "ssl.keystore.password": PASSWORD,
                "ssl.truststore.location": str(tls_material.truststore_jks),
                "ssl.truststore.password": PASSWORD,
                "ssl.client.auth": "required",
            }
        )
    )
    client = client_context(
        SslSettings.from_config(
            {
                "ssl.truststore.location": str(tls_material.truststore_p12),
                "ssl.truststore.password": PASSWORD,
                "ssl.keystore.location": str(tls_material.client_keystore_p12),
                "ssl.keystore.password": PASSWORD,
            }
        )
    )
    result = tls_handshake(server, client)
    assert result.ok, (result.client_error, result.server_error)
    assert ssl_principal(result.server_peer_der) == "User:" + CLIENT_DN
    assert ssl_principal(result.server_peer_der, "RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/L") == "User:alice@eng"
    # the broker's own certificate seen by the client maps too
    assert ssl_principal(result.client_peer_der) == "User:CN=localhost"
