"""Broker configuration: Kafka's ``server.properties`` names, types and defaults, validated once.

The keys are declared in ``broker.config_keys`` (``CONFIG_KEYS``, ``KEYS_BY_NAME``, ``ConfigKey``,
``ConfigError``, all re-exported here). ``BrokerConfig.from_properties`` takes string values (a properties
file plus ``--override key=value``) and returns a typed, immutable config; a bad value raises
``ConfigError`` naming the key, the value and what was expected. Unknown keys are kept and reported by
``unknown_keys`` (the broker logs them, as Kafka does) rather than rejected, so a real Kafka
``server.properties`` loads. Log settings (``log.*``, ``message.max.bytes``) are declared there too and
handed to ``broker.log.config.LogConfig`` as the defaults of every topic. ``docs/configuration.md`` is
generated from ``CONFIG_KEYS`` (``render_docs``).

Immutable after construction; safe to share across threads.
"""

from __future__ import annotations

import dataclasses
import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_kafkalog.security.redaction import HIDDEN
from spark_kafkalog.security.redaction import is_secret_key as _is_secret_name

from .config_keys import CONFIG_KEYS, KEYS_BY_NAME, LISTENER_OVERRIDABLE, ConfigError, ConfigKey

__all__ = [
    "CONFIG_KEYS",
    "KEYS_BY_NAME",
    "BrokerConfig",
    "ConfigError",
    "ConfigKey",
    "HIDDEN",
    "SECURITY_PROTOCOLS",
    "Listener",
    "is_secret_key",
    "listener_prefix",
    "parse_properties",
    "render_docs",
]

# broker keys outside the "log" section that are also topic-config defaults (see broker.log.config)
_LOG_SYNONYMS_ELSEWHERE = frozenset({"min.insync.replicas", "unclean.leader.election.enable"})
_LISTENER_PREFIX = "listener.name."
_JAAS_KEY = "sasl.jaas.config"
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class Listener:
    """One ``NAME://host:port`` listener; ``host == ""`` binds every interface. ``name`` is upper-case (Kafka's
    ``ListenerName.normalised``); its security protocol is ``BrokerConfig.security_protocol(name)``."""

    name: str
    host: str
    port: int

    @classmethod
    def parse(cls, text: str, key: str) -> Listener:
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_-]*)://(\[[^\]]*\]|[^:]*):(\d+)", text.strip())
        if not m:
            raise ConfigError(f"{key}={text!r}: expected NAME://host:port, for example PLAINTEXT://:9092")
        name, host, port = m.group(1).upper(), m.group(2).strip("[]"), int(m.group(3))
        if port > 65535:
            raise ConfigError(f"{key}={text!r}: port {port} out of range")
        return cls(name, host, port)

    @property
    def config_prefix(self) -> str:
        """``listener.name.<lower-case name>.``, the prefix of this listener's overrides."""
        return listener_prefix(self.name)

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


def listener_prefix(name: str) -> str:
    """Kafka's ``ListenerName.configPrefix``: ``listener.name.<lower-case name>.``."""
    return f"{_LISTENER_PREFIX}{name.lower()}."


@dataclass(frozen=True)
class BrokerConfig:
    """Typed broker configuration. ``values`` holds every declared key (defaults filled in); ``originals`` the
    strings as given (listener-prefixed keys included). ``repr`` hides secrets (see ``redacted``)."""

    values: Mapping[str, Any]
    originals: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __repr__(self) -> str:
        return f"BrokerConfig({self.redacted()!r})"

    @property
    def broker_id(self) -> int:
        return self.values["broker.id"]

    @property
    def listeners(self) -> tuple[Listener, ...]:
        return tuple(Listener.parse(x, "listeners") for x in self.values["listeners"])

    @property
    def advertised_listeners(self) -> tuple[Listener, ...]:
        raw = self.values["advertised.listeners"]
        listeners = tuple(Listener.parse(x, "advertised.listeners") for x in raw) if raw is not None else self.listeners
        host = None
        out = []
        for lst in listeners:
            if not lst.host or lst.host == "0.0.0.0":
                host = host or socket.getfqdn()
                lst = Listener(lst.name, host, lst.port)
            out.append(lst)
        return tuple(out)

    # -- listeners and their security ------------------------------------------------------------
    @property
    def listener_security_protocol_map(self) -> dict[str, str]:
        """``listener.security.protocol.map`` as ``{LISTENER NAME: protocol}`` (names upper-case)."""
        out: dict[str, str] = {}
        for item in self.values["listener.security.protocol.map"]:
            name, sep, protocol = item.partition(":")
            name, protocol = name.strip().upper(), protocol.strip().upper()
            if not sep or not name or protocol not in SECURITY_PROTOCOLS:
                raise ConfigError(
                    f"listener.security.protocol.map: {item!r}: expected NAME:PROTOCOL with PROTOCOL one of "
                    f"{', '.join(SECURITY_PROTOCOLS)}"
                )
            if name in out:
                raise ConfigError(f"listener.security.protocol.map: listener {name} is mapped twice")
            out[name] = protocol
        return out

    def security_protocol(self, listener: str) -> str:
        """The security protocol of listener ``listener``; ``ConfigError`` naming it when it has none."""
        protocol = self.listener_security_protocol_map.get(listener.upper())
        if protocol is None:
            raise ConfigError(
                f"listener {listener.upper()}: no security protocol defined for it in listener.security.protocol.map"
            )
        return protocol

    @property
    def inter_broker_listener_name(self) -> str:
        """``inter.broker.listener.name``, else the listener named like ``security.inter.broker.protocol``
        (default PLAINTEXT), as Kafka's ``interBrokerListenerName``."""
        name = self.values["inter.broker.listener.name"]
        if name is not None:
            return name.upper()
        return self.values["security.inter.broker.protocol"] or "PLAINTEXT"

    @property
    def inter_broker_security_protocol(self) -> str:
        return self.security_protocol(self.inter_broker_listener_name)

    def listener_value(self, listener: str, key: str) -> Any:
        """The typed value of ``key`` for ``listener``: ``listener.name.<l>.<key>`` when given, else the plain
        key. Kafka's exception: on a SASL_SSL listener ``ssl.client.auth`` counts only listener-prefixed
        (``none`` otherwise; ``ChannelBuilders``)."""
        spec = KEYS_BY_NAME[key]
        prefixed = listener_prefix(listener) + key
        if key in LISTENER_OVERRIDABLE and prefixed in self.originals:
            return _parse_as(spec, prefixed, self.originals[prefixed])
        if key == "ssl.client.auth" and self.security_protocol(listener) == "SASL_SSL":
            return "none"
        return self.values[key]

    def listener_properties(self, listener: str) -> dict[str, str]:
        """The string view one listener sees: every plain key, then its ``listener.name.<l>.`` keys with the
        prefix removed (winning), Kafka's SASL_SSL ``ssl.client.auth`` rule applied. For building its TLS
        context (``SslSettings.from_config``). Contains secrets: never log it."""
        prefix = listener_prefix(listener)
        out = {k: v for k, v in self.originals.items() if not k.startswith(_LISTENER_PREFIX)}
        if self.security_protocol(listener) == "SASL_SSL":
            out.pop("ssl.client.auth", None)
        out.update((k[len(prefix) :], v) for k, v in self.originals.items() if k.startswith(prefix))
        return out

    def sasl_enabled_mechanisms(self, listener: str) -> tuple[str, ...]:
        """``sasl.enabled.mechanisms`` of a SASL listener (listener-prefixed wins); () when unset."""
        return tuple(self.listener_value(listener, "sasl.enabled.mechanisms") or ())

    def sasl_jaas_config(self, listener: str, mechanism: str) -> str | None:
        """The JAAS line of ``mechanism`` on ``listener``: ``listener.name.<l>.<mechanism lower>.sasl.jaas.config``,
        else ``sasl.jaas.config`` (a kafkalog fallback for brokers without a static JAAS file), else None."""
        prefixed = f"{listener_prefix(listener)}{mechanism.lower()}.{_JAAS_KEY}"
        if prefixed in self.originals:
            return self.originals[prefixed].strip()
        return self.values[_JAAS_KEY]

    def redacted(self) -> dict[str, str]:
        """``originals`` with every secret (passwords, keys, JAAS lines) shown as ``[hidden]``: safe to log."""
        return {k: HIDDEN if is_secret_key(k) else v for k, v in self.originals.items()}

    @property
    def log_dirs(self) -> tuple[str, ...]:
        return self.values["log.dirs"] or (self.values["log.dir"],)

    @property
    def zookeeper_connect(self) -> str:
        return self.values["zookeeper.connect"]

    @property
    def unknown_keys(self) -> tuple[str, ...]:
        """Keys kafkalog does not use (logged at start-up); a listener's overrides of known keys and its
        mechanisms' JAAS configs count as known."""
        return tuple(sorted(k for k in self.originals if k not in KEYS_BY_NAME and not self._is_listener_key(k)))

    def _is_listener_key(self, key: str) -> bool:
        if not key.startswith(_LISTENER_PREFIX):
            return False
        rest = key[len(_LISTENER_PREFIX) :]
        for lst in self.listeners:
            name = lst.name.lower() + "."
            if rest.startswith(name):
                tail = rest[len(name) :]
                return tail in LISTENER_OVERRIDABLE or tail.endswith("." + _JAAS_KEY)
        return False

    def log_properties(self) -> dict[str, str]:
        """The original strings of every key that sets a topic default (``log.*``, ``message.max.bytes``,
        ``min.insync.replicas``, ...), for ``LogConfig.broker_defaults``."""
        section = {k.name for k in CONFIG_KEYS if k.section == "log"} | _LOG_SYNONYMS_ELSEWHERE
        return {k: v for k, v in self.originals.items() if k in section}

    def with_overrides(self, overrides: Mapping[str, str]) -> BrokerConfig:
        return BrokerConfig.from_properties({**self.originals, **overrides})

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> BrokerConfig:
        """Validate ``props`` (strings, or already-typed values from Python callers)."""
        originals = {k: v if isinstance(v, str) else _to_property(v) for k, v in props.items()}
        values: dict[str, Any] = {}
        for key in CONFIG_KEYS:
            if key.name in originals:
                values[key.name] = key.parse(originals[key.name])
            elif key.required:
                raise ConfigError(f"{key.name} is required ({key.doc})")
            else:
                values[key.name] = key.default
        cfg = cls(values, originals)
        _validate_listeners(cfg)  # now, not at start-up
        return cfg

    @classmethod
    def from_file(cls, path: str | Path, overrides: Iterable[str] = ()) -> BrokerConfig:
        """Load a properties file, then apply ``key=value`` overrides (later wins)."""
        props = parse_properties(Path(path).read_text(), source=str(path))
        for item in overrides:
            if "=" not in item:
                raise ConfigError(f"override {item!r}: expected key=value")
            k, v = item.split("=", 1)
            props[k.strip()] = v.strip()
        return cls.from_properties(props)


def is_secret_key(key: str) -> bool:
    """Is ``key`` (plain or listener-prefixed) a password, key or JAAS config whose value must never be shown?
    A ``password``-typed broker key, or what ``spark_kafkalog.security.redaction`` calls secret."""
    spec = KEYS_BY_NAME.get(key)
    return (spec is not None and spec.type == "password") or _is_secret_name(key)


def _parse_as(spec: ConfigKey, name: str, raw: str) -> Any:
    """Parse ``raw`` with ``spec``'s type and range, errors naming ``name`` (a listener-prefixed key)."""
    return dataclasses.replace(spec, name=name).parse(raw)


def _validate_listeners(cfg: BrokerConfig) -> None:
    """Kafka's ``KafkaConfig.validateValues`` rules for listeners, plus what kafkalog needs at start-up.

    Listener names unique, non-zero ports unique per host; every listener mapped to a protocol; advertised
    names among the listeners; ``inter.broker.listener.name`` xor ``security.inter.broker.protocol``, naming an
    advertised listener; listener-prefixed values valid; a SASL listener with ``sasl.enabled.mechanisms``; a
    SASL inter-broker listener with ``sasl.mechanism.inter.broker.protocol`` among its mechanisms; a TLS
    listener with a keystore.
    """
    listeners = cfg.listeners
    names = [lst.name for lst in listeners]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"listeners: listener name {name} is used more than once")
    ports = [(lst.host, lst.port) for lst in listeners if lst.port]
    for hp in ports:
        if ports.count(hp) > 1:
            raise ConfigError(f"listeners: port {hp[1]} is used by more than one listener")
    protocol_map = cfg.listener_security_protocol_map
    for name in names:
        if name not in protocol_map:
            raise ConfigError(
                f"listeners: listener {name}: no security protocol defined for it in listener.security.protocol.map"
            )
    advertised = [lst.name for lst in cfg.advertised_listeners] if cfg["advertised.listeners"] is not None else names
    for name in advertised:
        if name not in names:
            raise ConfigError(f"advertised.listeners: listener {name} is not in listeners ({', '.join(names)})")
        if advertised.count(name) > 1:
            raise ConfigError(f"advertised.listeners: listener name {name} is used more than once")
    if cfg["inter.broker.listener.name"] is not None and "security.inter.broker.protocol" in cfg.originals:
        raise ConfigError(
            "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set "
            f"(inter.broker.listener.name={cfg['inter.broker.listener.name']}, "
            f"security.inter.broker.protocol={cfg['security.inter.broker.protocol']})"
        )
    inter = cfg.inter_broker_listener_name  # advertised names are listeners, all of them mapped
    if inter not in advertised:
        given = cfg["inter.broker.listener.name"] or cfg["security.inter.broker.protocol"]
        raise ConfigError(
            f"inter.broker.listener.name: the inter-broker listener {inter}{'' if given else ' (the default)'} "
            f"must be a listener name defined in advertised.listeners (defined: {', '.join(advertised)})"
        )
    for lst in listeners:
        for key in LISTENER_OVERRIDABLE:
            if lst.config_prefix + key in cfg.originals:
                cfg.listener_value(lst.name, key)
        protocol = protocol_map[lst.name]
        if protocol.startswith("SASL_") and not cfg.sasl_enabled_mechanisms(lst.name):
            raise ConfigError(
                f"listener {lst.name} ({protocol}): sasl.enabled.mechanisms is not set (or "
                f"{lst.config_prefix}sasl.enabled.mechanisms); Kafka's default GSSAPI is not supported, name "
                "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and/or OAUTHBEARER"
            )
        if protocol in ("SSL", "SASL_SSL") and not (
            cfg.listener_value(lst.name, "ssl.keystore.location") or cfg.listener_value(lst.name, "ssl.keystore.key")
        ):
            raise ConfigError(
                f"listener {lst.name} ({protocol}): no keystore; set {lst.config_prefix}ssl.keystore.location "
                "(or ssl.keystore.location, or the inline ssl.keystore.key and ssl.keystore.certificate.chain)"
            )
    inter_protocol = protocol_map[inter]
    if inter_protocol.startswith("SASL_"):
        mechanism = cfg["sasl.mechanism.inter.broker.protocol"]
        if mechanism is None:
            raise ConfigError(
                f"sasl.mechanism.inter.broker.protocol is not set but the inter-broker listener {inter} is "
                f"{inter_protocol}; Kafka's default GSSAPI is not supported, name one of the listener's "
                "sasl.enabled.mechanisms"
            )
        enabled = cfg.sasl_enabled_mechanisms(inter)
        if mechanism not in enabled:
            raise ConfigError(
                f"sasl.mechanism.inter.broker.protocol={mechanism}: not among the sasl.enabled.mechanisms of the "
                f"inter-broker listener {inter} ({', '.join(enabled)})"
            )


def _to_property(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def parse_properties(text: str, *, source: str = "<properties>") -> dict[str, str]:
    """Java ``.properties`` syntax: ``key=value`` or ``key: value`` or ``key value``; ``#``/``!`` comments;
    a trailing backslash continues a line; ``\\t \\n \\uXXXX`` escapes."""
    out: dict[str, str] = {}
    logical: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip()
        i += 1
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical.append(line[:-1])
            continue
        logical.append(line)
        entry = "".join(logical)
        logical = []
        m = re.match(r"((?:\\.|[^=:\s])+)\s*[=:\s]\s*(.*)$", entry)
        if not m:
            key, value = entry.strip(), ""
        else:
            key, value = m.group(1), m.group(2)
        try:
            key, value = _unescape(key), _unescape(value)
        except ValueError as e:
            raise ConfigError(f"{source}: line {i}: {e}") from None
        out[key] = value
    return out


def _unescape(s: str) -> str:
    def repl(m: re.Match) -> str:
        c = m.group(1)
        if c.startswith("u"):
            return chr(int(c[1:], 16))
        return {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", repl, s)


def render_docs() -> str:
    """docs/configuration.md, from ``CONFIG_KEYS``."""
    out = [
        "# Configuration reference",
        "",
        "Generated from `broker/config_keys/` (`make docs`); `tests/broker/test_config.py` fails when it is stale.",
        "Names, types and defaults follow Kafka's `server.properties`. Unknown keys are accepted and logged.",
        "Values are validated at start-up; an error names the key, the value and what was expected.",
        "`kafkalog broker start --config FILE --override key=value` overrides a file's values.",
        "",
    ]
    sections = {
        "broker": "Broker and network",
        "security": "Listeners, TLS and SASL",
        "zookeeper": "ZooKeeper",
        "topics": "Topics",
        "log": "Log store (defaults of every topic)",
        "replication": "Replication",
        "groups": "Groups and offsets",
        "transactions": "Transactions",
    }
    intros = {
        "security": [
            "Listener names are free (`CLIENT://:9093,INTERNAL://10.0.0.1:9092`); each needs a protocol in "
            "`listener.security.protocol.map`. Every key below except the map, the two inter-broker keys, "
            "`sasl.mechanism.inter.broker.protocol` and `sasl.oauthbearer.allowed.urls` may be given for one "
            "listener as `listener.name.<lower-case name>.<key>`, which wins over the plain key (on a SASL_SSL "
            "listener `ssl.client.auth` counts only that way, as in Kafka). SASL JAAS configs per listener and "
            "mechanism: `listener.name.<l>.<mechanism lower-case>.sasl.jaas.config` (e.g. "
            "`listener.name.client.scram-sha-512.sasl.jaas.config`). Brokers reach each other on the "
            "inter-broker listener with its TLS stores and the `username`/`password` of its JAAS config for "
            "`sasl.mechanism.inter.broker.protocol`. Passwords, keys and JAAS configs never appear in logs or "
            "DescribeConfigs values.",
            "",
        ]
    }
    for section, title in sections.items():
        out += [f"## {title}", "", *intros.get(section, []), "| key | type | default | meaning |", "|---|---|---|---|"]
        for k in CONFIG_KEYS:
            if k.section != section:
                continue
            default = "required" if k.required else "" if k.default is None else _to_property(k.default)
            extra = f" Allowed: {', '.join(k.choices)}." if k.choices and k.type != "string" else ""
            out.append(f"| `{k.name}` | {k.type} | {('`' + default + '`') if default else '-'} | {k.doc}{extra} |")
        out.append("")
    return "\n".join(out)
