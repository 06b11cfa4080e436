"""Secrets out of logs, errors and reprs: which config keys are secret, and masking JAAS lines.

* ``is_secret_key(key)``: True for Kafka's PASSWORD-type settings and their librdkafka / kafka-python
  spellings. The key is compared case-insensitively with ``_`` and ``-`` read as ``.`` (``sasl_plain_password`` =
  ``sasl.plain.password``), after any prefix (``kafka.``, ``listener.name.<l>.``, ``<mech>.``). Secret when the
  last segment is ``password``, ``passwd``, ``passphrase``, ``secret``, ``token``, ``credential(s)`` or
  ``key.pem``; or the key ends with ``sasl.jaas.config``, ``ssl.keystore.key``, ``ssl.key.pem``, ``private.key``,
  or (Kafka types them PASSWORD too) ``ssl.keystore.certificate.chain``, ``ssl.truststore.certificates``.
  Names that only mention a token (``sasl.oauthbearer.token.endpoint.url``) are not secret.
* ``redact(config)``: a copy with every secret value (not None) replaced by ``"[hidden]"`` (Kafka's word).
* ``redact_jaas(text)``: the JAAS line with secret option values replaced by ``"[hidden]"`` and the rest kept
  (as Spark's ``KafkaRedactionUtil`` does), for messages that must show which login module was configured.
  Secret options: ``password``, ``clientSecret``/``client_secret``, ``secret``, PLAIN's ``user_<name>`` entries,
  and any option whose name ends in ``password`` or ``secret``; values double-quoted, single-quoted (backslash
  escapes; an unterminated quote runs to the end) or bare.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["HIDDEN", "is_secret_key", "redact", "redact_jaas"]

HIDDEN = "[hidden]"

_SECRET_LAST_SEGMENTS = frozenset({"password", "passwd", "passphrase", "secret", "token", "credential", "credentials"})
_SECRET_SUFFIXES = (
    "sasl.jaas.config",
    "ssl.keystore.key",
    "ssl.key.pem",
    "key.pem",
    "private.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.certificates",
)


def _normalise(key: str) -> str:
    return key.strip().lower().replace("_", ".").replace("-", ".")


def is_secret_key(key: str) -> bool:
    """Whether values of ``key`` must never be logged (see the module docstring)."""
    normalised = _normalise(key)
    if normalised.rsplit(".", 1)[-1] in _SECRET_LAST_SEGMENTS:
        return True
    return any(normalised == suffix or normalised.endswith("." + suffix) for suffix in _SECRET_SUFFIXES)


def redact(config: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``config`` with secret values shown as ``[hidden]`` (None stays None)."""
    return {k: (HIDDEN if v is not None and is_secret_key(str(k)) else v) for k, v in config.items()}


_JAAS_OPTION = re.compile(
    r"""(?P<key>[A-Za-z_$][\w.$-]*)(?P<eq>\s*=\s*)"""
    r"""(?P<value>"(?:[^"\\]|\\.)*(?:"|\\?$)|'(?:[^'\\]|\\.)*(?:'|\\?$)|[^\s;]+)""",
    re.DOTALL,
)


def _secret_jaas_option(name: str) -> bool:
    lowered = name.lower()
    return (
        lowered in ("password", "clientsecret", "client_secret", "secret")
        or lowered.startswith("user_")
        or lowered.endswith(("password", "secret"))
    )


def redact_jaas(text: str) -> str:
    """``text`` with the values of secret JAAS options replaced by ``"[hidden]"`` (see the module docstring)."""

    def mask(match: re.Match[str]) -> str:
        if not _secret_jaas_option(match.group("key")):
            return match.group(0)
        return f'{match.group("key")}{match.group("eq")}"{HIDDEN}"'

    return _JAAS_OPTION.sub(mask, text)
