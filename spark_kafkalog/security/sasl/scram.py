"""SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka speaks them, client and server.

Messages (``scram/internals/ScramMessages.java``)::

    client-first   n,[a=<saslname>],n=<saslname>,r=<cnonce>[,<ext>=<value>]*     gs2 header "n" only
    server-first   r=<cnonce><snonce>,s=<base64 salt>,i=<iterations>
    client-final   c=<base64 gs2 header>,r=<cnonce><snonce>,p=<base64 ClientProof>   ("c=biws" for "n,,")
    server-final   v=<base64 ServerSignature>

    SaltedPassword  = PBKDF2-HMAC-H(UTF-8(password), salt, i)     no SASLprep (Kafka does none)
    ClientKey       = HMAC(SaltedPassword, "Client Key")   StoredKey = H(ClientKey)
    ServerKey       = HMAC(SaltedPassword, "Server Key")
    AuthMessage     = client-first-bare "," server-first "," client-final-without-proof
    ClientProof     = ClientKey XOR HMAC(StoredKey, AuthMessage)
    ServerSignature = HMAC(ServerKey, AuthMessage)

A saslname escapes "," as ``=2C`` and "=" as ``=3D``; any other "=" is malformed. The only extension Kafka
knows is ``tokenauth=true`` (a delegation-token login, KIP-48); unknown extensions are ignored. Kafka never
sends ``e=``: failures travel as SaslAuthenticate error 58.

Server: every failure (malformed message, unknown user, wrong proof, a client-final nonce that is not exactly
cnonce+snonce: CVE-2024-56128, except librdkafka < 2.6.1's ``cnonce+cnonce+snonce``, see ``_nonce_continues``)
raises the same ``SaslAuthenticationFailed``; an unknown user is answered
with a stable fake credential and fails at the proof, like a wrong password (no user enumeration).
Client: refuses iterations outside [4096, max_iterations] before running PBKDF2 (kafka-python
CVE-2026-10143), a server nonce that does not extend its own, and a wrong server signature.

Credentials are stored as Kafka's ``ScramCredentialUtils`` string
``salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..errors import SaslAuthenticationFailed
from .base import authentication_failed

__all__ = [
    "MAX_ITERATIONS",
    "MIN_ITERATIONS",
    "ScramClient",
    "ScramCredential",
    "ScramMechanism",
    "ScramServer",
    "escape_saslname",
    "unescape_saslname",
]


MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


class ScramMechanism(Enum):
    """The two SCRAM mechanisms: SASL name, hash, Kafka's wire type (APIs 50/51), iteration bounds."""

    SCRAM_SHA_256 = ("SCRAM-SHA-256", "sha256", 1)
    SCRAM_SHA_512 = ("SCRAM-SHA-512", "sha512", 2)

    def __init__(self, mechanism_name: str, hash_name: str, wire_type: int) -> None:
        self.mechanism_name = mechanism_name
        self.hash_name = hash_name
        self.wire_type = wire_type

    @property
    def min_iterations(self) -> int:
        """4096 (Kafka's ``ScramMechanism.minIterations``)."""
        return MIN_ITERATIONS

    @property
    def max_iterations(self) -> int:
        """16384: AlterUserScramCredentials' upper bound, and this client's default cap."""
        return MAX_ITERATIONS

    @property
    def digest_size(self) -> int:
        return hashlib.new(self.hash_name).digest_size

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism:
        for m in cls:
            if m.mechanism_name == name:
                return m
        raise ValueError(f"unknown SCRAM mechanism {name!r} (expected SCRAM-SHA-256 or SCRAM-SHA-512)")

    @classmethod
    def from_wire_type(cls, wire_type: int) -> ScramMechanism:
        for m in cls:
            if m.wire_type == wire_type:
                return m
        raise ValueError(f"unknown SCRAM mechanism type {wire_type} (expected 1 or 2)")

    # -- the primitives of RFC 5802 §3 --

    def hmac(self, key: bytes, message: bytes) -> bytes:
        return hmac.new(key, message, self.hash_name).digest()

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        return hashlib.pbkdf2_hmac(self.hash_name, password.encode("utf-8"), salt, iterations)


def _random_token() -> str:
    """Kafka's ``ScramFormatter.secureRandomString``: a random 130-bit number in base 36."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


@dataclass(frozen=True)
class ScramCredential:
    """What a server stores for one user and mechanism (the keys are hidden from ``repr``)."""

    salt: bytes
    stored_key: bytes = field(repr=False)
    server_key: bytes = field(repr=False)
    iterations: int

    def to_kafka_string(self) -> str:
        """Kafka's ``ScramCredentialUtils.credentialToString`` format."""
        return (
            f"salt={_b64(self.salt)},stored_key={_b64(self.stored_key)},"
            f"server_key={_b64(self.server_key)},iterations={self.iterations}"
        )

    @classmethod
    def from_kafka_string(cls, text: str) -> ScramCredential:
        """Parse ``salt=..,stored_key=..,server_key=..,iterations=N`` (exactly these four keys).

        Raises ``ValueError`` naming what is wrong (never the key material).
        """
        props: dict[str, str] = {}
        for token in text.split(","):
            key, sep, value = token.partition("=")
            if not sep or not key:
                raise ValueError("SCRAM credential: expected key=value pairs separated by ','")
            props[key] = value
        expected = {"salt", "stored_key", "server_key", "iterations"}
        if set(props) != expected or len(text.split(",")) != 4:
            raise ValueError(f"SCRAM credential: expected exactly the keys {sorted(expected)}, got {sorted(props)}")
        try:
            salt, stored, server = (_unb64(props[k]) for k in ("salt", "stored_key", "server_key"))
        except (binascii.Error, ValueError):
            raise ValueError("SCRAM credential: salt, stored_key and server_key must be base64") from None
        if not re.fullmatch(r"[0-9]{1,10}", props["iterations"]):
            raise ValueError("SCRAM credential: iterations must be a positive integer")
        iterations = int(props["iterations"])
        if iterations <= 0:
            raise ValueError("SCRAM credential: iterations must be a positive integer")
        return cls(salt, stored, server, iterations)

    @classmethod
    def from_salted_password(
        cls, mechanism: ScramMechanism, salted_password: bytes, salt: bytes, iterations: int
    ) -> ScramCredential:
        """The credential from an already salted password (what AlterUserScramCredentials upserts carry)."""
        client_key = mechanism.hmac(salted_password, b"Client Key")
        return cls(
            salt=bytes(salt),
            stored_key=mechanism.hash(client_key),
            server_key=mechanism.hmac(salted_password, b"Server Key"),
            iterations=iterations,
        )

    @classmethod
    def from_password(
        cls, mechanism: ScramMechanism, password: str, iterations: int = 4096, salt: bytes | None = None
    ) -> ScramCredential:
        """A new credential (salt: Kafka's kind, the UTF-8 of a random base-36 string, unless given).

        Raises ``ValueError`` when iterations is below the mechanism's minimum (4096), as kafka-configs does.
        """
        if iterations < mechanism.min_iterations:
            raise ValueError(
                f"iterations {iterations} is less than the minimum {mechanism.min_iterations} required for "
                f"{mechanism.mechanism_name}"
            )
        salt = _random_token().encode("ascii") if salt is None else bytes(salt)
        return cls.from_salted_password(
            mechanism, mechanism.salted_password(password, salt, iterations), salt, iterations
        )


def escape_saslname(name: str) -> str:
    """RFC 5802 saslname: "=" -> "=3D", "," -> "=2C"."""
    return name.replace("=", "=3D").replace(",", "=2C")


def unescape_saslname(saslname: str) -> str:
    """The inverse of ``escape_saslname``; raises ``ValueError`` on any other use of "="."""
    out: list[str] = []
    i = 0
    while i < len(saslname):
        c = saslname[i]
        if c == "=":
            code = saslname[i + 1 : i + 3]
            if code == "2C":
                out.append(",")
            elif code == "3D":
                out.append("=")
            else:
                raise ValueError("invalid '=' escape in saslname")
            i += 3
        elif c == ",":
            raise ValueError("unescaped ',' in saslname")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_printable_nonce(nonce: str) -> bool:
    return bool(nonce) and all("\x21" <= c <= "\x7e" and c != "," for c in nonce)


def _attributes(parts: list[str]) -> list[tuple[str, str]]:
    out = []
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1 and not key.isidentifier():
            raise ValueError("malformed attribute")
        out.append((key, value))
    return out


_FAKE_SECRET = secrets.token_bytes(32)


def _fake_credential(mechanism: ScramMechanism, username: str) -> ScramCredential:
    """A stable per-process credential for an unknown user: same salt on every attempt, a base-36 salt
    like Kafka's, keys no password produces. The exchange proceeds and fails at the proof."""
    seed = hmac.new(_FAKE_SECRET, f"{mechanism.mechanism_name}\0{username}".encode(), "sha512").digest()
    n = int.from_bytes(seed[:17], "big") >> 6  # 130 bits
    salt = ""
    while True:
        n, r = divmod(n, 36)
        salt = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + salt
        if n == 0:
            break
    return ScramCredential(salt.encode("ascii"), seed[17:49], seed[32:64], mechanism.min_iterations)


class ScramServer:
    """Server side of one SCRAM exchange.

    ``lookup(mechanism_name, username)`` returns the user's ``ScramCredential`` or None;
    ``token_lookup(mechanism_name, token_id)`` (optional) returns ``(ScramCredential, owner_name)`` or
    ``(ScramCredential, owner_name, expiry_ms)`` for a ``tokenauth=true`` login, None when the token is unknown
    or expired; the principal is ``User:<owner_name>``. A stored credential with fewer than 4096 iterations is
    refused, as Kafka does. ``nonce`` fixes the server nonce
    (tests: RFC 7677's example), else a fresh random one per exchange.
    """

    _CLIENT_FIRST, _CLIENT_FINAL, _COMPLETE, _FAILED = range(4)

    def __init__(
        self,
        mechanism: ScramMechanism,
        lookup: Callable[[str, str], ScramCredential | None],
        token_lookup: Callable[[str, str], tuple[Any, ...] | None] | None = None,
        *,
        nonce: str | None = None,
    ) -> None:
        self._mech = mechanism
        self.mechanism = mechanism.mechanism_name
        self._lookup = lookup
        self._token_lookup = token_lookup
        self._server_nonce = nonce if nonce is not None else _random_token()
        if not _is_printable_nonce(self._server_nonce):
            raise ValueError("server nonce must be printable ASCII without ','")
        self._state = self._CLIENT_FIRST
        self._username = ""
        self._principal_name = ""
        self._token = False
        self._credential: ScramCredential | None = None
        self._failure_detail: str | None = None  # set when the credential is a stand-in: fail at the proof
        self._token_expiry_ms: int | None = None
        self._gs2_header = ""
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""

    def __repr__(self) -> str:
        return f"ScramServer(mechanism={self.mechanism!r}, complete={self.complete})"

    def _fail(self, detail: str) -> SaslAuthenticationFailed:
        self._state = self._FAILED
        return authentication_failed(self.mechanism, f"{self.mechanism}: {detail}")

    def evaluate_response(self, response: bytes) -> bytes:
        try:
            text = bytes(response).decode("utf-8")
        except UnicodeDecodeError:
            raise self._fail("message is not UTF-8") from None
        if self._state == self._CLIENT_FIRST:
            return self._client_first(text).encode("utf-8")
        if self._state == self._CLIENT_FINAL:
            return self._client_final(text).encode("utf-8")
        raise self._fail("message received after the exchange ended")

    def _client_first(self, text: str) -> str:
        if not text.startswith("n,"):
            raise self._fail("client-first must start with gs2 header 'n,' (no channel binding)")
        header_rest = text[2:]
        authzid_part, sep, bare = header_rest.partition(",")
        if not sep:
            raise self._fail("malformed client-first message")
        authzid = ""
        try:
            if authzid_part:
                if not authzid_part.startswith("a="):
                    raise ValueError("malformed gs2 header")
                authzid = unescape_saslname(authzid_part[2:])
            attrs = _attributes(bare.split(","))
            if len(attrs) < 2 or attrs[0][0] != "n" or attrs[1][0] != "r":
                raise ValueError("expected n=<saslname>,r=<nonce>")
            username = unescape_saslname(attrs[0][1])
        except ValueError as e:
            raise self._fail(f"malformed client-first message: {e}") from None
        client_nonce = attrs[1][1]
        if not username or not _is_printable_nonce(client_nonce):
            raise self._fail("malformed client-first message: empty username or bad nonce")
        extensions = dict(attrs[2:])
        if authzid and authzid != username:
            raise self._fail(f"authorization id differs from username {username!r}")
        self._token = extensions.get("tokenauth", "").lower() == "true"
        self._username = username
        credential = None
        if self._token:
            if self._token_lookup is None:
                self._failure_detail = "tokenauth login but delegation tokens are not supported here"
            else:
                found = self._token_lookup(self.mechanism, username)
                if found is None:
                    self._failure_detail = f"unknown or expired delegation token {username!r}"
                else:
                    credential, self._principal_name = found[0], found[1]
                    self._token_expiry_ms = found[2] if len(found) > 2 else None
        else:
            credential = self._lookup(self.mechanism, username)
            if credential is None:
                self._failure_detail = f"unknown user {username!r}"
            self._principal_name = username
        if credential is not None and credential.iterations < self._mech.min_iterations:
            self._failure_detail = (
                f"stored credential of {username!r} has {credential.iterations} iterations, below the minimum "
                f"{self._mech.min_iterations}"
            )
            credential = None
        if credential is None:
            credential = _fake_credential(self._mech, username)
        self._credential = credential
        self._gs2_header = text[: len(text) - len(bare)]
        self._client_first_bare = bare
        self._nonce = client_nonce + self._server_nonce
        self._server_first = f"r={self._nonce},s={_b64(credential.salt)},i={credential.iterations}"
        self._state = self._CLIENT_FINAL
        return self._server_first

    def _client_final(self, text: str) -> str:
        without_proof, sep, proof_b64 = text.rpartition(",p=")
        if not sep:
            raise self._fail("client-final message has no proof")
        try:
            attrs = _attributes(without_proof.split(","))
            if len(attrs) < 2 or attrs[0][0] != "c" or attrs[1][0] != "r":
                raise ValueError("expected c=<binding>,r=<nonce>")
            binding = _unb64(attrs[0][1])
            proof = _unb64(proof_b64)
        except (ValueError, binascii.Error) as e:
            raise self._fail(f"malformed client-final message: {e}") from None
        if binding != self._gs2_header.encode("utf-8"):
            raise self._fail("client-final channel binding does not match the gs2 header")
        if not self._nonce_continues(attrs[1][1]):
            raise self._fail("client-final nonce is not the nonce of server-first (CVE-2024-56128)")
        assert self._credential is not None
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        signature = self._mech.hmac(self._credential.stored_key, auth_message)
        if len(proof) != len(signature):
            raise self._fail("client proof has the wrong length")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        proof_ok = hmac.compare_digest(self._mech.hash(client_key), self._credential.stored_key)
        if self._failure_detail is not None:
            raise self._fail(self._failure_detail)
        if not proof_ok:
            raise self._fail(f"invalid proof for user {self._username!r}")
        self._state = self._COMPLETE
        return "v=" + _b64(self._mech.hmac(self._credential.server_key, auth_message))

    def _nonce_continues(self, nonce: str) -> bool:
        """The client-final nonce is server-first's, exactly, or, from librdkafka before 2.6.1 only, the client's
        own nonce followed by server-first's (``<cnonce><cnonce><snonce>``: its bug, fixed there in 2.6.1).

        Any other value fails (CVE-2024-56128: Kafka before the fix accepted any prefix). The tolerated form still
        holds this exchange's fresh server nonce in full, and the proof is computed over it, so it binds the session
        exactly as the RFC's form does; Kafka 3.9 accepts it too (its check is a suffix match), Kafka 4 does not.
        Debian's kcat 1.7.1 links librdkafka 2.0.2.
        """
        expected = self._nonce.encode("utf-8")
        got = nonce.encode("utf-8")
        if hmac.compare_digest(got, expected):
            return True
        client_nonce = self._nonce[: len(self._nonce) - len(self._server_nonce)]
        return hmac.compare_digest(got, client_nonce.encode("utf-8") + expected)

    @property
    def complete(self) -> bool:
        return self._state == self._COMPLETE

    @property
    def principal(self) -> str:
        if not self.complete:
            raise RuntimeError("SCRAM exchange not complete")
        return f"User:{self._principal_name}"

    @property
    def username(self) -> str:
        """The saslname the client logged in with (the token id for a token login)."""
        return self._username

    @property
    def credential_expiry_ms(self) -> int | None:
        """For a token login, the token's expiry (wall-clock ms) when the token lookup gave one (Kafka's
        ``tokenExpiryTimestamp``: it bounds the session, KIP-368); None otherwise."""
        return self._token_expiry_ms if self.complete else None

    @property
    def token_authenticated(self) -> bool:
        return self.complete and self._token


class ScramClient:
    """Client side of one SCRAM exchange. ``nonce`` fixes the client nonce (tests), else random."""

    def __init__(
        self,
        mechanism: ScramMechanism,
        username: str,
        password: str,
        *,
        token_auth: bool = False,
        max_iterations: int = MAX_ITERATIONS,
        nonce: str | None = None,
    ) -> None:
        self._mech = mechanism
        self.mechanism = mechanism.mechanism_name
        self._username = username
        self._password = password
        self._token_auth = token_auth
        self._max_iterations = max_iterations
        self._nonce = nonce if nonce is not None else _random_token()
        if not _is_printable_nonce(self._nonce):
            raise ValueError("client nonce must be printable ASCII without ','")
        self._client_first_bare = f"n={escape_saslname(username)},r={self._nonce}" + (
            ",tokenauth=true" if token_auth else ""
        )
        self._server_signature: bytes | None = None
        self.complete = False
        self.credential_expiry_ms: int | None = None

    def __repr__(self) -> str:
        return f"ScramClient(mechanism={self.mechanism!r}, username={self._username!r}, complete={self.complete})"

    def _fail(self, message: str) -> SaslAuthenticationFailed:
        return SaslAuthenticationFailed(f"{self.mechanism} authentication failed: {message}")

    def initial_response(self) -> bytes:
        return ("n,," + self._client_first_bare).encode("utf-8")

    def evaluate_challenge(self, challenge: bytes) -> bytes | None:
        try:
            text = bytes(challenge).decode("utf-8")
        except UnicodeDecodeError:
            raise self._fail("server message is not UTF-8") from None
        if self.complete:
            raise self._fail("server message after the exchange completed")
        if self._server_signature is None:
            return self._server_first(text).encode("utf-8")
        self._server_final(text)
        return None

    def _server_first(self, text: str) -> str:
        if text.startswith("e="):
            raise self._fail(f"server error {text[2:]!r}")
        try:
            attrs = dict(_attributes(text.split(",")))
            nonce, salt, iterations_text = attrs["r"], _unb64(attrs["s"]), attrs["i"]
        except (KeyError, ValueError, binascii.Error):
            raise self._fail("malformed server-first message") from None
        if not re.fullmatch(r"[0-9]{1,10}", iterations_text):
            raise self._fail("server-first iterations is not a number")
        iterations = int(iterations_text)
        if iterations < self._mech.min_iterations:
            raise self._fail(f"server asked for {iterations} iterations, below the minimum {self._mech.min_iterations}")
        if iterations > self._max_iterations:
            raise self._fail(
                f"server asked for {iterations} iterations, above this client's cap {self._max_iterations} "
                "(sasl.scram.max.iterations)"
            )
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce) or not _is_printable_nonce(nonce):
            raise self._fail("server nonce does not extend the client nonce")
        salted = self._mech.salted_password(self._password, salt, iterations)
        client_key = self._mech.hmac(salted, b"Client Key")
        stored_key = self._mech.hash(client_key)
        without_proof = f"c={_b64(b'n,,')},r={nonce}"
        auth_message = f"{self._client_first_bare},{text},{without_proof}".encode()
        signature = self._mech.hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        self._server_signature = self._mech.hmac(self._mech.hmac(salted, b"Server Key"), auth_message)
        return f"{without_proof},p={_b64(proof)}"

    def _server_final(self, text: str) -> None:
        if text.startswith("e="):
            raise self._fail(f"server error {text[2:]!r}")
        if not text.startswith("v="):
            raise self._fail("malformed server-final message")
        try:
            signature = _unb64(text[2:].split(",", 1)[0])
        except (ValueError, binascii.Error):
            raise self._fail("malformed server-final message") from None
        assert self._server_signature is not None
        if not hmac.compare_digest(signature, self._server_signature):
            raise self._fail("invalid server signature (the server does not know the credential)")
        self.complete = True
