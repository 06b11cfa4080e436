"""Schema Registry keys (read by ``broker.schema_registry.service``): the REST listeners a broker serves
Confluent Schema Registry's API on, where the schemas are kept, the defaults of a new registry, and the
listeners' TLS and authentication (docs/schema-registry.md).

``schema.registry.ssl.<key>`` (any ``ssl.*`` key of the security section) configures the https listeners; a key
not given that way falls back to the broker's plain ``ssl.<key>``. The prefixed keys are declared below for the
documentation; passwords and keys never appear in logs.
"""

from __future__ import annotations

from spark_kafkalog.schemas.compatibility import COMPATIBILITY_LEVELS

from .schema import ConfigKey

_K = ConfigKey

SCHEMA_REGISTRY_SSL_KEYS = (
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.client.auth",
    "ssl.enabled.protocols",
    "ssl.protocol",
    "ssl.cipher.suites",
)
"""The ``ssl.*`` keys that ``schema.registry.`` may prefix."""

_SECRET = {
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
}

SCHEMA_REGISTRY_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "schema.registry.listeners",
        "list",
        (),
        "Where this broker serves Confluent Schema Registry's REST API: `http://host:port` and `https://host:port`, "
        "comma-separated (port 0: any free port); empty (the default) serves none.",
    ),
    _K(
        "schema.registry.topic",
        "string",
        "_schemas",
        "Compacted topic holding the registry's schemas, configs and modes (Confluent's `kafkastore.topic`); every "
        "registry of a cluster on the same topic serves the same schemas.",
    ),
    _K(
        "schema.registry.topic.replication.factor",
        "int",
        3,
        "Replication factor of the schemas topic when the registry creates it (capped at the live brokers).",
        at_least=1,
    ),
    _K(
        "schema.registry.compatibility.level",
        "string",
        "BACKWARD",
        "Global compatibility level until `PUT /config` sets one.",
        choices=COMPATIBILITY_LEVELS,
    ),
    _K(
        "schema.registry.mode.mutability",
        "boolean",
        True,
        "May `PUT /mode` change the registry's mode (READWRITE, READONLY, READONLY_OVERRIDE, IMPORT)?",
    ),
    _K(
        "schema.registry.authentication.method",
        "string",
        None,
        "NONE or BASIC (HTTP basic authentication against the broker's SCRAM credentials and PLAIN JAAS users); "
        "unset: BASIC when any broker listener uses SASL, else NONE.",
        choices=("NONE", "BASIC"),
    ),
    _K(
        "schema.registry.init.timeout.ms",
        "int",
        60000,
        "Longest the registry waits at start-up for its topic (creation and reading it to the end).",
        at_least=1,
    ),
    _K(
        "schema.registry.request.max.bytes",
        "int",
        16 * 1024 * 1024,
        "Largest request body the REST listeners accept (larger: 413).",
        at_least=1024,
    ),
    *(
        _K(
            f"schema.registry.{key}",
            "password"
            if key in _SECRET
            else "list"
            if key in ("ssl.enabled.protocols", "ssl.cipher.suites")
            else "string",
            None,
            f"`{key}` of the https schema registry listeners (unset: the broker's `{key}`).",
            choices=("none", "requested", "required") if key == "ssl.client.auth" else None,
        )
        for key in SCHEMA_REGISTRY_SSL_KEYS
    ),
)
