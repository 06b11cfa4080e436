"""A client's SASL settings (``SaslClientSettings``), read from Kafka's and librdkafka's config names.

``SaslClientSettings.from_config(config)`` takes dotted keys (the client maps its own spellings first):

* ``security.protocol``: None is returned unless it is SASL_PLAINTEXT or SASL_SSL (any case);
* ``sasl.mechanism`` (Kafka) or ``sasl.mechanisms`` (librdkafka; both given must agree): PLAIN,
  SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER. Not set is refused (Kafka's default is GSSAPI, i.e.
  Kerberos, which is not supported; we do not guess), and so is GSSAPI;
* credentials for PLAIN and SCRAM: ``sasl.jaas.config`` (``PlainLoginModule`` or ``ScramLoginModule``;
  as in Kafka either module serves either mechanism, ``tokenauth="true"`` makes a delegation-token login)
  or librdkafka's ``sasl.username`` / ``sasl.password``. When both are given, ``sasl.jaas.config`` wins:
  it is the explicit Kafka/Spark setting (Spark users set ``kafka.sasl.jaas.config``), and the two are
  never mixed (a JAAS line without a password does not borrow ``sasl.password``);
* ``sasl.scram.max.iterations``: the most PBKDF2 iterations this client runs for a server (default
  16384, at least 4096); a broker asking more is refused before any hashing;
* OAUTHBEARER, the first of these that is set:
  1. ``oauth_cb``: a callable returning ``(token, expiry epoch seconds[, principal, extensions])``, called
     with the ``sasl.oauthbearer.config`` string when it takes one argument (confluent-kafka's shape);
  2. OIDC client credentials, librdkafka's ``sasl.oauthbearer.method=oidc`` with
     ``sasl.oauthbearer.client.id/.client.secret/.token.endpoint.url/.scope/.extensions`` (``k=v,k=v``), or
     Kafka's ``sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.
     OAuthBearerLoginCallbackHandler`` (3.1-3.3: ``...oauthbearer.secured.OAuthBearerLoginCallbackHandler``)
     with ``sasl.oauthbearer.token.endpoint.url`` and JAAS ``clientId``, ``clientSecret``, ``scope``,
     ``extension_<name>``; no other handler class is accepted (nothing is ever instantiated);
  3. Kafka's unsecured JWS from JAAS ``unsecuredLoginStringClaim_sub="alice"`` (+ ``..NumberClaim_``,
     ``..ListClaim_``, ``unsecuredLoginLifetimeSeconds``, extensions ``unsecuredLoginExtension_<name>``);
  4. librdkafka's unsecured JWT, ``sasl.oauthbearer.config="principal=alice [lifeSeconds=600]
     [scope=a,b] [extension_<name>=<v>]"``.

Errors are ``SecurityConfigError`` naming the setting; no message or repr shows a password, a client
secret or a token.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import SecurityConfigError
from ..jaas import JaasConfig, parse_jaas_config
from .base import MECHANISMS
from .oauthbearer import client_initial_response, unsecured_login_token
from .scram import MAX_ITERATIONS, MIN_ITERATIONS

__all__ = ["KAFKA_OIDC_LOGIN_HANDLERS", "SaslClientSettings"]

KAFKA_OIDC_LOGIN_HANDLERS = frozenset(
    {
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
        "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
    }
)
_SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class SaslClientSettings:
    """What a client needs to authenticate with one mechanism (``create_client`` builds the exchange)."""

    mechanism: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    token_provider: Callable[[], tuple[str, float]] | None = field(default=None, repr=False)
    extensions: Mapping[str, str] = field(default_factory=dict, hash=False)
    token_auth: bool = False
    max_scram_iterations: int = MAX_ITERATIONS

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise SecurityConfigError(
                f"sasl.mechanism {self.mechanism!r} is not supported (supported: {', '.join(MECHANISMS)})"
            )
        if self.max_scram_iterations < MIN_ITERATIONS:
            raise SecurityConfigError(
                f"sasl.scram.max.iterations {self.max_scram_iterations} is below SCRAM's minimum {MIN_ITERATIONS}"
            )

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> SaslClientSettings | None:
        """The settings of a SASL_* ``security.protocol``, None for PLAINTEXT/SSL (see the module docstring)."""
        protocol = str(config.get("security.protocol") or "PLAINTEXT").strip().upper()
        if protocol not in _SASL_PROTOCOLS:
            return None
        mechanism = _mechanism(config, protocol)
        jaas_text = config.get("sasl.jaas.config")
        jaas = parse_jaas_config(str(jaas_text)) if jaas_text not in (None, "") else None
        max_iterations = _max_iterations(config.get("sasl.scram.max.iterations"))
        if mechanism == "OAUTHBEARER":
            if jaas is not None and jaas.kind != "OAUTHBEARER":
                raise SecurityConfigError(
                    f"sasl.jaas.config: {jaas.module} cannot log in with OAUTHBEARER "
                    "(use org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule)"
                )
            provider, extensions = _oauth(config, jaas)
            return cls(mechanism, token_provider=provider, extensions=extensions, max_scram_iterations=max_iterations)
        if jaas is not None:
            if jaas.kind == "OAUTHBEARER":
                raise SecurityConfigError(
                    f"sasl.jaas.config: OAuthBearerLoginModule cannot log in with {mechanism} "
                    "(use PlainLoginModule or ScramLoginModule with username and password)"
                )
            username, password, token_auth = jaas.username, jaas.password, jaas.token_auth
            source = "sasl.jaas.config (username=... password=...)"
        else:
            username, password, token_auth = config.get("sasl.username"), config.get("sasl.password"), False
            source = "sasl.username and sasl.password"
        if not username or not password:
            raise SecurityConfigError(
                f"sasl.mechanism={mechanism} needs a username and a password: set {source}"
                + ("" if jaas is not None else " (or sasl.jaas.config)")
            )
        if token_auth and mechanism == "PLAIN":
            raise SecurityConfigError("sasl.jaas.config: tokenauth=true (delegation tokens) needs a SCRAM mechanism")
        return cls(
            mechanism,
            username=str(username),
            password=str(password),
            token_auth=token_auth,
            max_scram_iterations=max_iterations,
        )


def _mechanism(config: Mapping[str, Any], protocol: str) -> str:
    given = [str(config[k]).strip() for k in ("sasl.mechanism", "sasl.mechanisms") if config.get(k)]
    if not given:
        raise SecurityConfigError(
            f"security.protocol={protocol} needs sasl.mechanism (Kafka's default, GSSAPI/Kerberos, is not "
            f"supported): set it to one of {', '.join(MECHANISMS)}"
        )
    names = {g.upper() for g in given}
    if len(names) != 1:
        raise SecurityConfigError(f"sasl.mechanism and sasl.mechanisms disagree ({' vs '.join(given)})")
    mechanism = names.pop()
    if mechanism == "GSSAPI":
        raise SecurityConfigError(
            f"sasl.mechanism=GSSAPI (Kerberos) is not supported; use one of {', '.join(MECHANISMS)}"
        )
    if mechanism not in MECHANISMS:
        raise SecurityConfigError(f"sasl.mechanism {mechanism!r} is not supported (supported: {', '.join(MECHANISMS)})")
    return mechanism


def _max_iterations(value: Any) -> int:
    if value is None or value == "":
        return MAX_ITERATIONS
    try:
        n = int(str(value).strip())
    except ValueError:
        raise SecurityConfigError(f"sasl.scram.max.iterations must be an integer, got {value!r}") from None
    if n < MIN_ITERATIONS:
        raise SecurityConfigError(f"sasl.scram.max.iterations {n} is below SCRAM's minimum {MIN_ITERATIONS}")
    return n


def _checked_extensions(extensions: Mapping[str, str], setting: str) -> dict[str, str]:
    try:
        client_initial_response("x", extensions)
    except SecurityConfigError as e:
        raise SecurityConfigError(f"{setting}: {e}") from None
    return dict(extensions)


def _pairs(text: str, sep: str, setting: str) -> dict[str, str]:
    out = {}
    for item in text.split(sep):
        item = item.strip()
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq:
            raise SecurityConfigError(f"{setting}: expected key=value items, got an item without '='")
        out[key.strip()] = value.strip()
    return out


class _OAuthCallback:
    """Adapts a librdkafka/confluent-kafka ``oauth_cb`` to a ``token_provider`` (its extensions kept)."""

    def __init__(self, callback: Callable[..., Any], config_string: str | None) -> None:
        self._callback = callback
        try:
            params = [
                p
                for p in inspect.signature(callback).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
            ]
        except (TypeError, ValueError):
            params = []
        self._args: tuple[Any, ...] = (config_string,) if len(params) == 1 else ()

    def __repr__(self) -> str:
        return f"oauth_cb({getattr(self._callback, '__name__', 'callable')})"

    def __call__(self) -> tuple[Any, ...]:
        result = self._callback(*self._args)
        if not isinstance(result, tuple) or len(result) not in (2, 4):
            raise SecurityConfigError("oauth_cb must return (token, expiry) or (token, expiry, principal, extensions)")
        return result


class _UnsecuredTokens:
    """A ``token_provider`` making Kafka's unsecured JWS from JAAS-style options (a fresh one per call)."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self._options = dict(options)
        unsecured_login_token(self._options)  # refuse bad options now, not at the first connection

    def __repr__(self) -> str:
        return "UnsecuredJwsTokens()"

    def __call__(self) -> tuple[str, float]:
        return unsecured_login_token(self._options)


def _oauth(config: Mapping[str, Any], jaas: JaasConfig | None) -> tuple[Callable[[], Any], dict[str, str]]:
    from .oidc import ClientCredentialsTokenProvider

    options = dict(jaas.options) if jaas is not None else {}
    rd_config = config.get("sasl.oauthbearer.config")
    callback = config.get("oauth_cb")
    if callback is not None:
        if not callable(callback):
            raise SecurityConfigError("oauth_cb must be a callable returning (token, expiry epoch seconds)")
        return _OAuthCallback(callback, None if rd_config is None else str(rd_config)), {}
    method = str(config.get("sasl.oauthbearer.method") or "default").strip().lower()
    handler = config.get("sasl.login.callback.handler.class")
    if handler and str(handler).strip() not in KAFKA_OIDC_LOGIN_HANDLERS:
        raise SecurityConfigError(
            f"sasl.login.callback.handler.class {str(handler)!r} is refused: only Kafka's "
            "OAuthBearerLoginCallbackHandler (OIDC client credentials) is supported; classes are never loaded"
        )
    if method not in ("default", "oidc"):
        raise SecurityConfigError(f"sasl.oauthbearer.method must be 'default' or 'oidc', got {method!r}")
    if method == "oidc":
        url = config.get("sasl.oauthbearer.token.endpoint.url")
        client_id, secret = config.get("sasl.oauthbearer.client.id"), config.get("sasl.oauthbearer.client.secret")
        scope = config.get("sasl.oauthbearer.scope")
        extensions = _pairs(str(config.get("sasl.oauthbearer.extensions") or ""), ",", "sasl.oauthbearer.extensions")
        names = "sasl.oauthbearer.token.endpoint.url, sasl.oauthbearer.client.id and sasl.oauthbearer.client.secret"
    elif handler:
        url = config.get("sasl.oauthbearer.token.endpoint.url")
        client_id, secret, scope = options.get("clientId"), options.get("clientSecret"), options.get("scope")
        extensions = {k[len("extension_") :]: v for k, v in options.items() if k.startswith("extension_")}
        names = 'sasl.oauthbearer.token.endpoint.url and JAAS clientId="..." clientSecret="..."'
    else:
        url = None
    if method == "oidc" or handler:
        if not url or not client_id or not secret:
            raise SecurityConfigError(f"OAUTHBEARER with OIDC client credentials needs {names}")
        provider = ClientCredentialsTokenProvider(str(url), str(client_id), str(secret), str(scope) if scope else None)
        return provider, _checked_extensions(extensions, "OAUTHBEARER extensions")
    if any(k.startswith("unsecuredLogin") for k in options):
        extensions = {
            k[len("unsecuredLoginExtension_") :]: v
            for k, v in options.items()
            if k.startswith("unsecuredLoginExtension_")
        }
        return _UnsecuredTokens(options), _checked_extensions(extensions, "sasl.jaas.config unsecuredLoginExtension_*")
    if rd_config:
        pairs = _pairs(str(rd_config), " ", "sasl.oauthbearer.config")
        claim = pairs.get("principalClaimName", "sub")
        mapped = {
            f"unsecuredLoginStringClaim_{claim}": pairs.get("principal", ""),
            "unsecuredLoginPrincipalClaimName": claim,
            "unsecuredLoginLifetimeSeconds": pairs.get("lifeSeconds", "3600"),
        }
        if "scope" in pairs:
            mapped[f"unsecuredLoginListClaim_{pairs.get('scopeClaimName', 'scope')}"] = "," + pairs["scope"]
        extensions = {k[len("extension_") :]: v for k, v in pairs.items() if k.startswith("extension_")}
        return _UnsecuredTokens(mapped), _checked_extensions(extensions, "sasl.oauthbearer.config")
    raise SecurityConfigError(
        "sasl.mechanism=OAUTHBEARER needs a token source: oauth_cb, OIDC settings (sasl.oauthbearer.method=oidc "
        "or sasl.login.callback.handler.class + sasl.oauthbearer.token.endpoint.url), or an unsecured JWS "
        '(sasl.jaas.config with unsecuredLoginStringClaim_sub="...")'
    )
