"""SCRAM credentials for ``AdminClient`` (KIP-554): DescribeUserScramCredentials (50), sent to any broker, and
AlterUserScramCredentials (51), sent to the controller named by Metadata (a NOT_CONTROLLER result refreshes
it and retries), both v0.

An upsertion carries the user, the mechanism, the iterations, a random salt (as Kafka's admin client makes
it: the UTF-8 of a random base-36 number) and the salted password, PBKDF2 computed here: the password itself
never leaves the process and is never in a repr. Per-user failures raise one ``AdminOperationError`` keyed
by user name. Pure functions over a send callable; thread-safe.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.client.admin.admin_steps import AdminRequest, AdminSteps, drive, fixed
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.sasl.scram import ScramMechanism

__all__ = [
    "ScramCredentialInfo",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
    "alter_user_scram_credentials",
    "alter_user_scram_credentials_steps",
    "describe_user_scram_credentials",
    "describe_user_scram_credentials_steps",
]

DESCRIBE = int(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS)
ALTER = int(ApiKey.ALTER_USER_SCRAM_CREDENTIALS)
DEFAULT_ITERATIONS = 4096
"""kafka-configs' default when ``iterations=`` is not given."""


@dataclass(frozen=True)
class ScramCredentialInfo:
    """One stored credential of a user: the mechanism's SASL name (``"SCRAM-SHA-256"``) and its iterations."""

    mechanism: str
    iterations: int


@dataclass(frozen=True)
class UserScramCredentialUpsertion:
    """Set ``user``'s credential for ``mechanism`` (``"SCRAM-SHA-256"`` or ``"SCRAM-SHA-512"``) from ``password``.
    ``salt``: random when None (give one only to reproduce a credential)."""

    user: str
    mechanism: str
    password: str = field(repr=False)
    iterations: int = DEFAULT_ITERATIONS
    salt: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class UserScramCredentialDeletion:
    """Remove ``user``'s credential for ``mechanism``."""

    user: str
    mechanism: str


def random_salt() -> bytes:
    """Kafka's ``ScramFormatter.secureRandomBytes``: the UTF-8 of a random 130-bit number in base 36."""
    n, digits = secrets.randbits(130), []
    while True:
        n, r = divmod(n, 36)
        digits.append("0123456789abcdefghijklmnopqrstuvwxyz"[r])
        if n == 0:
            return "".join(reversed(digits)).encode("ascii")


def _mechanism(name: str) -> ScramMechanism:
    try:
        return ScramMechanism.from_name(name)
    except ValueError as exc:
        raise KafkaClientError(str(exc)) from None


def describe_user_scram_credentials(
    send: Callable[..., tuple[int, Any, str | None]], users: Iterable[str] | None, *, missing_ok: bool = False
) -> tuple[dict[str, list[ScramCredentialInfo]], dict[str, KafkaClientError]]:
    """``describe_user_scram_credentials_steps`` driven by the blocking ``send`` (any broker)."""
    return drive(describe_user_scram_credentials_steps(users, missing_ok=missing_ok), send)


def describe_user_scram_credentials_steps(
    users: Iterable[str] | None, *, missing_ok: bool = False
) -> AdminSteps[tuple[dict[str, list[ScramCredentialInfo]], dict[str, KafkaClientError]]]:
    """``({user: [ScramCredentialInfo]}, {user: error})`` of ``users`` (every user with credentials when None).
    A named user without credentials is an error (RESOURCE_NOT_FOUND) unless ``missing_ok`` (then it is left
    out). A top-level error raises."""
    R = API_BY_KEY[DESCRIBE].Request
    body = R(users=None if users is None else [R.UserName(name=u) for u in users])
    _, response, peer = yield AdminRequest(DESCRIBE, fixed(body), "DescribeUserScramCredentials")
    peer = peer or "any broker"
    if response.error_code:
        raise error_for_code(
            response.error_code, "DescribeUserScramCredentials", broker=peer, detail=response.error_message
        )
    out: dict[str, list[ScramCredentialInfo]] = {}
    errors: dict[str, KafkaClientError] = {}
    for r in response.results:
        if r.error_code == ErrorCode.RESOURCE_NOT_FOUND and missing_ok:
            continue
        if r.error_code:
            errors[r.user] = error_for_code(
                r.error_code, f"DescribeUserScramCredentials of user {r.user!r}", broker=peer, detail=r.error_message
            )
            continue
        out[r.user] = [
            ScramCredentialInfo(ScramMechanism.from_wire_type(c.mechanism).mechanism_name, c.iterations)
            for c in r.credential_infos
        ]
    return out, errors


def alter_request(alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion]) -> Any:
    """The AlterUserScramCredentials request body; the salted passwords are computed here (PBKDF2)."""
    R = API_BY_KEY[ALTER].Request
    deletions, upsertions = [], []
    for a in alterations:
        mechanism = _mechanism(a.mechanism)
        if isinstance(a, UserScramCredentialDeletion):
            deletions.append(R.ScramCredentialDeletion(name=a.user, mechanism=mechanism.wire_type))
            continue
        if not mechanism.min_iterations <= a.iterations <= mechanism.max_iterations:
            raise KafkaClientError(
                f"iterations {a.iterations} for user {a.user!r} is outside {mechanism.min_iterations}.."
                f"{mechanism.max_iterations}, the range {mechanism.mechanism_name} allows"
            )
        salt = random_salt() if a.salt is None else a.salt
        upsertions.append(
            R.ScramCredentialUpsertion(
                name=a.user,
                mechanism=mechanism.wire_type,
                iterations=a.iterations,
                salt=salt,
                salted_password=mechanism.salted_password(a.password, salt, a.iterations),
            )
        )
    return R(deletions=deletions, upsertions=upsertions)


def alter_user_scram_credentials(
    send: Callable[..., tuple[int, Any, str]],
    alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion],
    timeout_ms: int,
) -> dict[str, KafkaClientError]:
    """``alter_user_scram_credentials_steps`` driven by the blocking ``send``."""
    return drive(alter_user_scram_credentials_steps(alterations, timeout_ms), send)


def alter_user_scram_credentials_steps(
    alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion], timeout_ms: int
) -> AdminSteps[dict[str, KafkaClientError]]:
    """Send one AlterUserScramCredentials to the controller (``AdminClient._controller_request``); returns the
    users that failed with their errors."""
    body = alter_request(alterations)
    _, response, peer = yield AdminRequest(ALTER, fixed(body), "AlterUserScramCredentials", timeout_ms=timeout_ms)
    return {
        r.user: error_for_code(
            r.error_code, f"AlterUserScramCredentials of user {r.user!r}", broker=peer, detail=r.error_message
        )
        for r in response.results
        if r.error_code
    }
