"""How a broker config key is declared and parsed: ``ConfigKey`` (name, type, default, valid range or
choices, meaning, section) and ``ConfigError``.

Types are Kafka's names: ``int``/``long`` (decimal), ``boolean`` (``true``/``false``, any case),
``double``, ``string``, ``password`` (a string), ``list`` (comma-separated, blanks dropped, a tuple).
``ConfigKey.parse`` turns a ``server.properties`` string into the typed value and checks it; a bad value
raises ``ConfigError`` naming the key, the value and what was expected. Immutable; safe to share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class ConfigError(ValueError):
    """A configuration value that is missing, unparsable or out of range; names the key."""


# -- types -------------------------------------------------------------------------------------------
def _int(value: str) -> int:
    return int(value.strip())


def _bool(value: str) -> bool:
    v = value.strip().lower()
    if v in ("true", "false"):
        return v == "true"
    raise ValueError("expected true or false")


def _float(value: str) -> float:
    return float(value.strip())


def _string(value: str) -> str:
    return value.strip()


def _list(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


_PARSERS: dict[str, Callable[[str], Any]] = {
    "int": _int,
    "long": _int,
    "boolean": _bool,
    "double": _float,
    "string": _string,
    "list": _list,
    "password": _string,
}


@dataclass(frozen=True)
class ConfigKey:
    """One documented key: type, default (``None`` = required or unset), valid range, and meaning."""

    name: str
    type: str
    default: Any
    doc: str
    at_least: float | None = None
    at_most: float | None = None
    choices: tuple[str, ...] | None = None
    required: bool = False
    section: str = "broker"
    excluded: tuple[Any, ...] = ()  # values inside the range that are still invalid (gzip level 0)

    def parse(self, raw: str) -> Any:
        try:
            value = _PARSERS[self.type](raw)
        except ValueError as e:
            raise ConfigError(f"{self.name}={raw!r}: expected {self.type} ({e})") from None
        self.check(value)
        return value

    def check(self, value: Any) -> None:
        if self.at_least is not None and value is not None and value < self.at_least:
            raise ConfigError(f"{self.name}={value!r}: must be at least {self.at_least:g}")
        if self.at_most is not None and value is not None and value > self.at_most:
            raise ConfigError(f"{self.name}={value!r}: must be at most {self.at_most:g}")
        if value is not None and value in self.excluded:
            raise ConfigError(f"{self.name}={value!r}: not a valid value ({self.doc})")
        if self.choices is not None and value is not None:
            items = value if isinstance(value, tuple) else (value,)
            bad = [v for v in items if v not in self.choices]
            if bad:
                raise ConfigError(f"{self.name}={value!r}: must be one of {', '.join(self.choices)}")
