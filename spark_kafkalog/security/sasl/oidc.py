"""OAuth 2 client-credentials tokens for the OAUTHBEARER client (Kafka's KIP-768 login handler, librdkafka's
``sasl.oauthbearer.method=oidc``).

``ClientCredentialsTokenProvider()`` POSTs ``grant_type=client_credentials[&scope=<scope>]``
(``application/x-www-form-urlencoded``) to the token endpoint with HTTP Basic authentication of the
form-urlencoded client id and secret (RFC 6749 §2.3.1), reads ``access_token`` from the JSON answer and
returns ``(token, expiry in epoch seconds)``: the JWT's ``exp`` claim when the token is a JWT carrying one,
else now + ``expires_in``; a token with neither is refused. Only ``http``/``https`` endpoints are used (no
``file:``), and when ``allowed_urls`` is given the endpoint must be on it (Kafka 4's
``org.apache.kafka.sasl.oauthbearer.allowed.urls``, CVE-2025-27817). Each call fetches a new token (it runs
once per authentication and re-authentication); it blocks for up to ``timeout_s``.
"""

from __future__ import annotations

import base64
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from ..errors import SaslAuthenticationFailed, SecurityConfigError
from .oauthbearer import OAuthTokenInvalid, decode_jwt_part

__all__ = ["ClientCredentialsTokenProvider"]

_MAX_RESPONSE_BYTES = 1 << 20


@dataclass(frozen=True)
class ClientCredentialsTokenProvider:
    """A ``token_provider`` for ``SaslClientSettings`` fetching tokens from an OAuth token endpoint."""

    token_endpoint_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str | None = None
    timeout_s: float = 10.0
    allowed_urls: Collection[str] | None = None
    urlopen: Callable[..., Any] = field(default=urllib.request.urlopen, repr=False, compare=False)
    clock_s: Callable[[], float] = field(default=time.time, repr=False, compare=False)

    def __post_init__(self) -> None:
        scheme = urllib.parse.urlsplit(self.token_endpoint_url).scheme.lower()
        if scheme not in ("http", "https"):
            raise SecurityConfigError(
                f"sasl.oauthbearer.token.endpoint.url {self.token_endpoint_url!r}: only http(s) URLs are supported"
            )
        if self.allowed_urls is not None and self.token_endpoint_url not in self.allowed_urls:
            raise SecurityConfigError(
                f"sasl.oauthbearer.token.endpoint.url {self.token_endpoint_url!r} is not in the allowed URLs "
                "(org.apache.kafka.sasl.oauthbearer.allowed.urls); refused (CVE-2025-27817)"
            )

    def _fail(self, why: str) -> SaslAuthenticationFailed:
        return SaslAuthenticationFailed(f"OAUTHBEARER: no token from {self.token_endpoint_url}: {why}")

    def __call__(self) -> tuple[str, float]:
        form = {"grant_type": "client_credentials"}
        if self.scope:
            form["scope"] = self.scope
        quote = urllib.parse.quote_plus
        basic = base64.b64encode(f"{quote(self.client_id)}:{quote(self.client_secret)}".encode()).decode("ascii")
        request = urllib.request.Request(
            self.token_endpoint_url,
            data=urllib.parse.urlencode(form).encode("ascii"),
            method="POST",
            headers={
                "Authorization": f"Basic {basic}",
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
        )
        now = self.clock_s()
        try:
            with self.urlopen(request, timeout=self.timeout_s) as response:
                body = response.read(_MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as e:
            raise self._fail(f"HTTP {e.code}") from None
        except (OSError, ValueError) as e:
            raise self._fail(type(e).__name__) from None
        try:
            answer = json.loads(body)
        except (ValueError, RecursionError):
            raise self._fail("the answer is not JSON") from None
        token = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            raise self._fail("the answer has no access_token")
        expiry: float | None = None
        parts = token.split(".")
        if len(parts) == 3:
            try:
                exp = decode_jwt_part(parts[1], "claims").get("exp")
            except OAuthTokenInvalid:
                exp = None
            if isinstance(exp, int | float) and not isinstance(exp, bool) and math.isfinite(exp):
                expiry = float(exp)
        expires_in = answer.get("expires_in")
        if (
            expiry is None
            and isinstance(expires_in, int | float)
            and not isinstance(expires_in, bool)
            and math.isfinite(expires_in)
        ):
            expiry = now + float(expires_in)
        if expiry is None:
            raise self._fail("the token has neither an 'exp' claim nor an 'expires_in'")
        return token, expiry
