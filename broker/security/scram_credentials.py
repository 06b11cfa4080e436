"""The broker's SCRAM credential cache: every user's SCRAM-SHA-256/512 credentials, as the SASL servers look
them up (never from ZooKeeper on the authentication path).

Source of truth: the user entity configs, ``/config/users/<sanitized user>`` (``ClusterRegistry.user_configs``),
whose ``SCRAM-SHA-256`` / ``SCRAM-SHA-512`` keys hold Kafka's ``ScramCredentialUtils`` string::

    {"version":1,"config":{"SCRAM-SHA-256":"salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=8192",
                           "producer_byte_rate":"1024"}}

Other keys (quotas) are not credentials and are ignored here. ``broker.metadata.sync.MetadataSync`` fills the
cache: ``replace_all`` with every user at start-up (and after a ZooKeeper session expiry or missed
notifications), ``update_user`` for each ``users/<name>`` config change notification, on every broker.

Concurrency: ``lookup`` may be called from any thread (the connection loop); updates swap a user's whole
entry (an immutable mapping) under a lock, so a lookup sees a user's old or new credentials, never a mix.
Credential strings and key material never reach a log or an exception message.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from types import MappingProxyType

from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism

__all__ = ["ScramCredentialCache", "scram_credentials_of"]

log = logging.getLogger("kafkalog.security.scram")

MECHANISM_NAMES = tuple(m.mechanism_name for m in ScramMechanism)
"""The config keys that hold credentials: ``("SCRAM-SHA-256", "SCRAM-SHA-512")``."""


def scram_credentials_of(user: str, config: Mapping[str, str]) -> dict[str, ScramCredential]:
    """The SCRAM credentials in one user's entity config, by mechanism name. A value that does not parse is
    left out and logged (the user's name, the mechanism and what is wrong; never the value)."""
    out = {}
    for name in MECHANISM_NAMES:
        text = config.get(name)
        if text is None:
            continue
        try:
            out[name] = ScramCredential.from_kafka_string(text)
        except ValueError as exc:
            log.error("user %r: ignoring its %s credential: %s", user, name, exc)
    return out


class ScramCredentialCache:
    """username -> {mechanism name -> ``ScramCredential``}. ``lookup`` is the ``scram_credential`` callable of
    ``spark_kafkalog.security.sasl.SaslServerCallbacks``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, Mapping[str, ScramCredential]] = {}

    def lookup(self, mechanism: str, username: str) -> ScramCredential | None:
        """The stored credential of ``username`` for ``mechanism`` (the SASL name, ``"SCRAM-SHA-256"``), or None."""
        entry = self._users.get(username)
        return None if entry is None else entry.get(mechanism)

    def update_user(self, user: str, config: Mapping[str, str]) -> None:
        """Take the user's credentials from its (whole) entity config; a config without any removes the user."""
        creds = scram_credentials_of(user, config)
        with self._lock:
            if creds:
                self._users[user] = MappingProxyType(creds)
            else:
                self._users.pop(user, None)
        log.info("SCRAM credentials of user %r: %s", user, ", ".join(sorted(creds)) or "none")

    def replace_all(self, configs: Mapping[str, Mapping[str, str]]) -> None:
        """Replace the whole cache with the credentials in ``configs`` (every user entity, by user name)."""
        users: dict[str, Mapping[str, ScramCredential]] = {}
        for user, config in configs.items():
            creds = scram_credentials_of(user, config)
            if creds:
                users[user] = MappingProxyType(creds)
        with self._lock:
            self._users = users
        log.info("SCRAM credentials loaded for %d user(s)", len(users))

    def users(self) -> dict[str, list[str]]:
        """Every user with credentials and its mechanisms (sorted), e.g. ``{"alice": ["SCRAM-SHA-256"]}``."""
        return {u: sorted(c) for u, c in sorted(self._users.items())}

    def __repr__(self) -> str:
        return f"ScramCredentialCache({len(self._users)} users)"
