"""Listener and authentication keys (section ``security`` of ``docs/configuration.md``), in documentation order.

Kafka's names and defaults (``SocketServerConfigs``, ``BrokerSecurityConfigs``, ``SslConfigs``,
``SaslConfigs``), except where a Kafka default names something kafkalog does not implement (GSSAPI): those
keys have no default here and ``BrokerConfig`` says clearly when one is needed. Every key in
``LISTENER_OVERRIDABLE`` may also be given per listener as ``listener.name.<lower-case name>.<key>``, which
wins over the plain key; SASL JAAS configs per listener and mechanism as
``listener.name.<l>.<mechanism lower-case>.sasl.jaas.config``. Values of type ``password`` never appear in
logs, errors or DescribeConfigs values.
"""

from __future__ import annotations

import functools

from .schema import ConfigKey

_S = "security"


_K = functools.partial(ConfigKey, section=_S)


DEFAULT_PROTOCOL_MAP = ("PLAINTEXT:PLAINTEXT", "SSL:SSL", "SASL_PLAINTEXT:SASL_PLAINTEXT", "SASL_SSL:SASL_SSL")

SECURITY_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "listener.security.protocol.map",
        "list",
        DEFAULT_PROTOCOL_MAP,
        "Security protocol of each listener name, `NAME:PROTOCOL,...` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL). "
        "A listener whose name is not mapped is a start-up error naming it.",
    ),
    _K(
        "inter.broker.listener.name",
        "string",
        None,
        "Listener the brokers use to reach each other (replica fetchers, controlled shutdown, transaction "
        "markers); must be in `advertised.listeners`. Not together with `security.inter.broker.protocol`.",
    ),
    _K(
        "security.inter.broker.protocol",
        "string",
        None,
        "Security protocol between brokers, naming the listener of the same name (Kafka's default PLAINTEXT "
        "applies when neither this nor `inter.broker.listener.name` is set).",
        choices=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
    ),
    _K(
        "sasl.mechanism.inter.broker.protocol",
        "string",
        None,
        "SASL mechanism brokers use with each other when the inter-broker listener is SASL_*; required then "
        "(Kafka's default GSSAPI is not supported). The identity is the `username`/`password` of that "
        "listener's JAAS config for the mechanism.",
        choices=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"),
    ),
    _K(
        "sasl.enabled.mechanisms",
        "list",
        None,
        "SASL mechanisms a SASL_* listener accepts (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER); required "
        "when a SASL listener exists (Kafka's default GSSAPI is not supported), usually listener-prefixed.",
        choices=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"),
    ),
    _K(
        "sasl.jaas.config",
        "password",
        None,
        "JAAS login line for every SASL listener and mechanism without "
        "`listener.name.<l>.<mechanism>.sasl.jaas.config` (a kafkalog fallback: Kafka reads a static JAAS file "
        'instead). PLAIN\'s `user_<name>="<password>"` entries are the accepted users; `username`/`password` '
        "the identity used between brokers. Only Plain, Scram and OAuthBearer login modules are accepted.",
    ),
    _K("sasl.server.max.receive.size", "int", 524288, "Largest frame accepted before authentication.", at_least=1),
    _K(
        "connection.failed.authentication.delay.ms",
        "int",
        100,
        "Delay before a connection whose authentication failed is closed (KIP-306).",
        at_least=0,
    ),
    _K(
        "connections.max.reauth.ms",
        "long",
        0,
        "Longest SASL session before the client must re-authenticate (KIP-368); 0 never expires sessions.",
        at_least=0,
    ),
    _K(
        "connection.authentication.timeout.ms",
        "long",
        10000,
        "Longest a TLS handshake, and the whole SASL exchange after it, may take before the connection is "
        "closed (kafkalog).",
        at_least=1,
    ),
    _K(
        "authorizer.class.name",
        "string",
        "",
        "The authorizer: empty for none (every request allowed; the ACL APIs answer SECURITY_DISABLED), or "
        "kafkalog's AclAuthorizer, with Kafka's AclAuthorizer semantics, under any of Kafka's names "
        "`kafka.security.authorizer.AclAuthorizer`, `kafka.security.auth.SimpleAclAuthorizer`, "
        "`org.apache.kafka.metadata.authorizer.StandardAuthorizer` or as `kafkalog.AclAuthorizer`. ACLs live "
        "in ZooKeeper as Kafka keeps them (`/kafka-acl`, `/kafka-acl-extended`).",
    ),
    _K(
        "super.users",
        "string",
        "",
        "Principals the authorizer allows everything, `;`-separated `Type:name` (`User:admin;User:broker`).",
    ),
    _K(
        "allow.everyone.if.no.acl.found",
        "boolean",
        False,
        "With an authorizer: allow every principal on a resource no ACL matches (Kafka's default: deny).",
    ),
    _K("ssl.keystore.type", "string", "JKS", "Keystore format: JKS, PKCS12 or PEM (detected from the file itself)."),
    _K("ssl.keystore.location", "string", None, "Keystore file (the listener's certificate and private key)."),
    _K("ssl.keystore.password", "password", None, "Keystore password (not allowed for PEM)."),
    _K("ssl.key.password", "password", None, "Password of the private key in the keystore or PEM key."),
    _K("ssl.keystore.certificate.chain", "password", None, "Inline PEM certificate chain (`ssl.keystore.type=PEM`)."),
    _K("ssl.keystore.key", "password", None, "Inline PEM PKCS#8 private key (`ssl.keystore.type=PEM`)."),
    _K("ssl.truststore.type", "string", "JKS", "Truststore format: JKS, PKCS12 or PEM (detected from the file)."),
    _K("ssl.truststore.location", "string", None, "Truststore file (CA certificates trusted for peers)."),
    _K("ssl.truststore.password", "password", None, "Truststore password (optional for JKS, not allowed for PEM)."),
    _K("ssl.truststore.certificates", "password", None, "Inline PEM trusted certificates."),
    _K(
        "ssl.client.auth",
        "string",
        "none",
        "Client certificates on SSL listeners: none, requested or required. On a SASL_SSL listener only the "
        "listener-prefixed key counts, as in Kafka.",
        choices=("none", "requested", "required"),
    ),
    _K("ssl.enabled.protocols", "list", ("TLSv1.2", "TLSv1.3"), "TLS versions accepted."),
    _K("ssl.protocol", "string", "TLSv1.3", "TLS protocol of the SSL context (its highest version)."),
    _K("ssl.cipher.suites", "list", None, "Cipher suites by IANA/JSSE name (default: OpenSSL's)."),
    _K(
        "ssl.principal.mapping.rules",
        "string",
        "DEFAULT",
        "Rules mapping a client certificate's subject DN to a principal name, `RULE:<regex>/<replacement>/[LU],...,"
        "DEFAULT`.",
    ),
    _K(
        "ssl.endpoint.identification.algorithm",
        "string",
        "https",
        "Host name verification when this broker connects to another over TLS (`https`; empty turns it off).",
    ),
    _K(
        "ssl.ktls.enable",
        "boolean",
        True,
        "Try kernel TLS so Fetch over TLS can use sendfile; falls back to read-and-encrypt where the kernel or "
        "OpenSSL does not offer it (kafkalog).",
    ),
    _K(
        "sasl.oauthbearer.jwks.endpoint.url",
        "string",
        None,
        "JWKS of the OAUTHBEARER token issuer: `https://...` (must be in `sasl.oauthbearer.allowed.urls`) or "
        "`file:` URL. Unset: Kafka's unsecured-JWS validator (development only).",
    ),
    _K(
        "sasl.oauthbearer.allowed.urls",
        "list",
        (),
        "URLs the broker may fetch a JWKS from (Kafka's `org.apache.kafka.sasl.oauthbearer.allowed.urls` system "
        "property; kafkalog: a config key). Empty allows no https URL.",
    ),
    _K(
        "sasl.oauthbearer.jwks.endpoint.refresh.ms",
        "long",
        3600000,
        "How often the JWKS is fetched again.",
        at_least=1,
    ),
    _K("sasl.oauthbearer.expected.audience", "list", None, "Audiences a token must name (one of)."),
    _K("sasl.oauthbearer.expected.issuer", "string", None, "Issuer a token must name."),
    _K("sasl.oauthbearer.clock.skew.seconds", "int", 30, "Clock difference tolerated in token times.", at_least=0),
    _K("sasl.oauthbearer.sub.claim.name", "string", "sub", "Claim holding the principal name."),
    _K("sasl.oauthbearer.scope.claim.name", "string", "scope", "Claim holding the scopes."),
)

LISTENER_OVERRIDABLE: frozenset[str] = frozenset(
    k.name
    for k in SECURITY_KEYS
    if k.name
    not in (
        "listener.security.protocol.map",
        "inter.broker.listener.name",
        "security.inter.broker.protocol",
        "sasl.mechanism.inter.broker.protocol",
        "sasl.oauthbearer.allowed.urls",
        "authorizer.class.name",
        "super.users",
        "allow.everyone.if.no.acl.found",
    )
)
"""Keys that ``listener.name.<l>.<key>`` may override for one listener."""
