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

import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config_keys import CONFIG_KEYS, KEYS_BY_NAME, ConfigError, ConfigKey

__all__ = [
    "CONFIG_KEYS",
    "KEYS_BY_NAME",
    "BrokerConfig",
    "ConfigError",
    "ConfigKey",
    "Listener",
    "parse_properties",
    "render_docs",
]

# broker keys outside the "log" section that are also topic-config defaults (see broker.log.config)
_LOG_SYNONYMS_ELSEWHERE = frozenset({"min.insync.replicas", "unclean.leader.election.enable"})


@dataclass(frozen=True)
class Listener:
    """One ``NAME://host:port`` listener; ``host == ""`` binds every interface."""

    name: str
    host: str
    port: int

    @classmethod
    def parse(cls, text: str, key: str) -> Listener:
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)://(\[[^\]]*\]|[^:]*):(\d+)", text.strip())
        if not m:
            raise ConfigError(f"{key}={text!r}: expected NAME://host:port, for example PLAINTEXT://:9092")
        name, host, port = m.group(1).upper(), m.group(2).strip("[]"), int(m.group(3))
        if name != "PLAINTEXT":
            raise ConfigError(f"{key}={text!r}: only PLAINTEXT listeners are supported")
        if port > 65535:
            raise ConfigError(f"{key}={text!r}: port {port} out of range")
        return cls(name, host, port)

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


@dataclass(frozen=True)
class BrokerConfig:
    """Typed broker configuration. ``values`` holds every declared key (defaults filled in)."""

    values: Mapping[str, Any]
    originals: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

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

    @property
    def log_dirs(self) -> tuple[str, ...]:
        return self.values["log.dirs"] or (self.values["log.dir"],)

    @property
    def zookeeper_connect(self) -> str:
        return self.values["zookeeper.connect"]

    @property
    def unknown_keys(self) -> tuple[str, ...]:
        return tuple(sorted(k for k in self.originals if k not in KEYS_BY_NAME))

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
        cfg.listeners  # noqa: B018 - validates the listener syntax now, not at start-up
        if values["advertised.listeners"] is not None:
            cfg.advertised_listeners  # noqa: B018
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
        "zookeeper": "ZooKeeper",
        "topics": "Topics",
        "log": "Log store (defaults of every topic)",
        "replication": "Replication",
        "groups": "Groups and offsets",
        "transactions": "Transactions",
    }
    for section, title in sections.items():
        out += [f"## {title}", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        for k in CONFIG_KEYS:
            if k.section != section:
                continue
            default = "required" if k.required else "" if k.default is None else _to_property(k.default)
            extra = f" Allowed: {', '.join(k.choices)}." if k.choices and k.type != "string" else ""
            out.append(f"| `{k.name}` | {k.type} | {('`' + default + '`') if default else '-'} | {k.doc}{extra} |")
        out.append("")
    return "\n".join(out)
