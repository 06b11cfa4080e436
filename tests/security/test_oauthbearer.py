"""OAUTHBEARER (RFC 7628, KIP-255/768): messages, the invalid-token dance, unsecured and JWKS validation, OIDC."""

from __future__ import annotations

import base64
import email.message
import functools
import http.server
import io
import json
import threading
import urllib.error
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from spark_kafkalog.security.errors import SaslAuthenticationFailed, SecurityConfigError
from spark_kafkalog.security.sasl import SaslClientSettings, SaslServerCallbacks, create_client, create_server
from spark_kafkalog.security.sasl.jwks import JwksValidator, load_jwks
from spark_kafkalog.security.sasl.oauthbearer import (
    OAuthBearerClient,
    OAuthBearerServer,
    OAuthTokenInvalid,
    UnsecuredJwsValidator,
    client_initial_response,
    parse_client_initial_response,
    unsecured_jws,
    unsecured_login_token,
)
from spark_kafkalog.security.sasl.oidc import ClientCredentialsTokenProvider

GENERIC = "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER"
NOW_S = 1_800_000_000
NOW_MS = NOW_S * 1000


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# -- client initial response ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "message, expected",
    [
        (b"n,,\x01auth=Bearer abc.def.\x01\x01", ("", "abc.def.", {})),
        (b"n,,\x01auth=bearer t\x01\x01", ("", "t", {})),
        (b"n,,\x01auth=Bearer a-_~+/.Z9==\x01\x01", ("", "a-_~+/.Z9==", {})),  # an RFC 6750 b64token
        (b"n,a=alice,\x01auth=Bearer t\x01\x01", ("alice", "t", {})),
        (b"n,a=a=2Cb,\x01auth=Bearer t\x01\x01", ("a,b", "t", {})),
        (
            b"n,,\x01traceId=1 2\x01auth=Bearer t\x01logicalCluster=lkc-1\x01\x01",
            ("", "t", {"traceId": "1 2", "logicalCluster": "lkc-1"}),
        ),
    ],
)
def test_parse_client_initial_response(message, expected):
    assert parse_client_initial_response(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        b"",
        b"y,,\x01auth=Bearer t\x01\x01",
        b"n,,auth=Bearer t\x01\x01",
        b"n,,\x01auth=Bearer t\x01",
        b"n,,\x01\x01",
        b"n,,\x01auth=Basic dXNlcg\x01\x01",
        b"n,,\x01auth=Bearer a b\x01\x01",
        b"n,,\x01auth=Bearer a=b\x01\x01",
        b"n,,\x01auth=Bearer \x01\x01",
        b"n,,\x01auth=Bearer t\x01auth=Bearer u\x01\x01",
        b"n,,\x01auth=Bearer t\x01bad key=v\x01\x01",
        b"n,,\x01auth=Bearer t\x01k\x01\x01",
        b"n,,\x01auth=Bearer t\x01k1=v\x01\x01",
        b"n,x=a,\x01auth=Bearer t\x01\x01",
        "n,,\x01auth=Bearer t\x01k=é\x01\x01".encode(),
    ],
)
def test_malformed_client_messages(message):
    with pytest.raises(ValueError):
        parse_client_initial_response(message)


def test_client_initial_response_layout():
    assert client_initial_response("a.b.", {"traceId": "x"}) == b"n,,\x01auth=Bearer a.b.\x01traceId=x\x01\x01"
    assert client_initial_response("t", authzid="a=b") == b"n,a=a=3Db,\x01auth=Bearer t\x01\x01"


@pytest.mark.parametrize("extensions", [{"auth": "x"}, {"a1": "x"}, {"": "x"}, {"k": ""}, {"k": "\x00"}])
def test_client_refuses_extensions_kafka_refuses(extensions):
    with pytest.raises(SecurityConfigError, match="extension"):
        client_initial_response("t", extensions)


# -- unsecured JWS -------------------------------------------------------------------------------


def claims(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"sub": "alice", "iat": NOW_S - 10, "exp": NOW_S + 600}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize(
    "token_claims, validator, reason",
    [
        (claims(exp=NOW_S - 1), UnsecuredJwsValidator(), "expired"),
        (claims(exp=NOW_S), UnsecuredJwsValidator(), "expired"),
        (claims(exp=None), UnsecuredJwsValidator(), "'exp'"),
        (claims(exp="soon"), UnsecuredJwsValidator(), "not a finite number"),
        (claims(sub=None), UnsecuredJwsValidator(), "'sub'"),
        (claims(sub=""), UnsecuredJwsValidator(), "'sub'"),
        (claims(sub=7), UnsecuredJwsValidator(), "'sub'"),
        (claims(iat=NOW_S + 60), UnsecuredJwsValidator(), "future"),
        (claims(iat=NOW_S + 700), UnsecuredJwsValidator(), "future"),
        (claims(nbf=NOW_S + 60), UnsecuredJwsValidator(), "not valid yet"),
        (claims(scope="a"), UnsecuredJwsValidator(required_scope=("a", "b")), "required scope"),
        (claims(scope=5), UnsecuredJwsValidator(), "scope"),
        (claims(), UnsecuredJwsValidator(principal_claim="azp"), "'azp'"),
    ],
)
def test_unsecured_validator_rejections(token_claims, validator, reason):
    with pytest.raises(OAuthTokenInvalid, match=reason):
        validator.validate(unsecured_jws(token_claims), NOW_MS)


@pytest.mark.parametrize(
    "token",
    [
        "abc",
        "a.b",
        b64url(b'{"alg":"RS256"}') + "." + b64url(json.dumps(claims()).encode()) + ".",
        b64url(b'{"alg":"none"}') + "." + b64url(json.dumps(claims()).encode()) + ".c2ln",
        b64url(b'{"alg":"none"}') + "." + b64url(b"[1]") + ".",
        b64url(b'{"alg":"none"}') + ".%%%.",
    ],
)
def test_unsecured_validator_refuses_malformed_and_signed_tokens(token):
    with pytest.raises(OAuthTokenInvalid):
        UnsecuredJwsValidator().validate(token, NOW_MS)


def test_unsecured_validator_accepts_and_reports_times_and_scope():
    validator = UnsecuredJwsValidator(required_scope=("read",), clock_skew_ms=5000)
    token = validator.validate(unsecured_jws(claims(scope="read write", exp=NOW_S + 1.5)), NOW_MS)
    assert (token.principal, token.expiry_ms, token.issued_at_ms) == ("alice", NOW_MS + 1500, NOW_MS - 10_000)
    assert token.scope == {"read", "write"}
    assert validator.validate(unsecured_jws(claims(scope=["read"], exp=NOW_S - 2)), NOW_MS).principal == "alice"


def test_unsecured_login_token_from_jaas_options():
    token, expiry = unsecured_login_token(
        {
            "unsecuredLoginStringClaim_sub": "alice",
            "unsecuredLoginNumberClaim_n": "3",
            "unsecuredLoginListClaim_scope": "|a|b",
            "unsecuredLoginLifetimeSeconds": "60",
        },
        now_s=NOW_S,
    )
    assert expiry == NOW_S + 60
    validated = UnsecuredJwsValidator(required_scope=("a", "b")).validate(token, NOW_MS)
    assert validated.principal == "alice" and validated.expiry_ms == NOW_MS + 60_000
    payload = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert payload["n"] == 3 and payload["iat"] == NOW_S


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"unsecuredLoginStringClaim_sub": ""},
        {"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginLifetimeSeconds": "x"},
    ],
)
def test_unsecured_login_token_needs_a_principal(options):
    with pytest.raises(SecurityConfigError, match="sasl.jaas.config"):
        unsecured_login_token(options)


# -- the server's exchange -----------------------------------------------------------------------


def server(validator: Any = None) -> OAuthBearerServer:
    made = create_server("OAUTHBEARER", SaslServerCallbacks(oauth_validator=validator, clock_ms=lambda: NOW_MS))
    assert isinstance(made, OAuthBearerServer)
    return made


def test_round_trip_with_the_unsecured_validator_and_extensions():
    client = OAuthBearerClient(lambda: (unsecured_jws(claims()), NOW_S + 600), {"traceId": "t-1"})
    srv = server()
    assert srv.evaluate_response(client.initial_response()) == b""
    assert client.evaluate_challenge(b"") is None
    assert client.complete and srv.complete
    assert srv.principal == "User:alice" and srv.credential_expiry_ms == NOW_MS + 600_000
    assert client.credential_expiry_ms == NOW_MS + 600_000
    assert srv.extensions == {"traceId": "t-1"} and srv.token_authenticated is False


@pytest.mark.parametrize(
    "token_claims, validator, challenge",
    [
        (claims(exp=NOW_S - 5), None, {"status": "invalid_token"}),
        (
            claims(scope="a"),
            UnsecuredJwsValidator(required_scope=("b",)),
            {"status": "insufficient_scope", "scope": "b"},
        ),
    ],
)
def test_invalid_token_gets_the_json_challenge_then_fails_on_the_clients_ack(token_claims, validator, challenge):
    client = OAuthBearerClient(lambda: (unsecured_jws(token_claims), NOW_S))
    srv = server(validator)
    answer = srv.evaluate_response(client.initial_response())
    assert json.loads(answer) == challenge
    ack = client.evaluate_challenge(answer)
    assert ack == b"\x01"
    with pytest.raises(SaslAuthenticationFailed) as e:
        srv.evaluate_response(ack)
    assert str(e.value) == GENERIC and "invalid token" in e.value.detail
    assert not srv.complete and not client.complete
    with pytest.raises(SaslAuthenticationFailed, match="rejected the token"):
        client.evaluate_challenge(b"")


@pytest.mark.parametrize(
    "first, second",
    [
        (b"garbage", None),
        (b"n,a=bob,\x01auth=Bearer " + unsecured_jws(claims()).encode() + b"\x01\x01", None),  # authzid != sub
        (b"n,,\x01auth=Bearer " + unsecured_jws(claims(exp=1)).encode() + b"\x01\x01", b"not-ack"),
        (b"\x01", None),  # an ack with no pending error
    ],
)
def test_every_server_failure_is_generic(first, second):
    srv = server()
    with pytest.raises(SaslAuthenticationFailed) as e:
        srv.evaluate_response(first)
        assert second is not None
        srv.evaluate_response(second)
    assert str(e.value) == GENERIC
    with pytest.raises(SaslAuthenticationFailed):  # and nothing is accepted afterwards
        srv.evaluate_response(b"n,,\x01auth=Bearer " + unsecured_jws(claims()).encode() + b"\x01\x01")


def test_authzid_equal_to_the_principal_is_accepted():
    srv = server()
    srv.evaluate_response(client_initial_response(unsecured_jws(claims()), authzid="alice"))
    assert srv.principal == "User:alice"


def test_token_never_in_repr_or_errors():
    token = unsecured_jws(claims(exp=NOW_S - 1))
    client = OAuthBearerClient(lambda: (token, NOW_S))
    srv = server()
    answer = srv.evaluate_response(client.initial_response())
    with pytest.raises(SaslAuthenticationFailed) as e:
        srv.evaluate_response(client.evaluate_challenge(answer) or b"")
    signature_free = token.rstrip(".")
    for text in (repr(client), repr(srv), str(e.value), e.value.detail):
        assert signature_free not in text


# -- JWKS validation -------------------------------------------------------------------------------

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
RSA_KEY_2 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
EC384_KEY = ec.generate_private_key(ec.SECP384R1())


def int_b64(n: int) -> str:
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def jwk(key: Any, kid: str, **extra: str) -> dict[str, str]:
    public = key.public_key().public_numbers()
    if isinstance(key, rsa.RSAPrivateKey):
        out = {"kty": "RSA", "n": int_b64(public.n), "e": int_b64(public.e), "kid": kid}
    else:
        crv = {"secp256r1": "P-256", "secp384r1": "P-384"}[key.curve.name]
        size = key.curve.key_size // 8
        out = {
            "kty": "EC",
            "crv": crv,
            "kid": kid,
            "x": b64url(public.x.to_bytes(size, "big")),
            "y": b64url(public.y.to_bytes(size, "big")),
        }
    out.update(extra)
    return out


def sign(key: Any, alg: str, payload: dict[str, Any], header: dict[str, Any] | None = None) -> str:
    head = {"alg": alg, "typ": "JWT", **(header or {})}
    signing_input = f"{b64url(json.dumps(head).encode())}.{b64url(json.dumps(payload).encode())}".encode()
    digest = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[alg[2:]]
    if alg.startswith("RS"):
        signature = key.sign(signing_input, padding.PKCS1v15(), digest)
    elif alg.startswith("PS"):
        signature = key.sign(signing_input, padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
    else:
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(digest)))
        size = (key.curve.key_size + 7) // 8
        signature = r.to_bytes(size, "big") + s.to_bytes(size, "big")
    return f"{signing_input.decode()}.{b64url(signature)}"


JWKS = {
    "keys": [
        jwk(RSA_KEY, "rsa-1"),
        jwk(EC_KEY, "ec-1"),
        jwk(EC384_KEY, "ec-384"),
        {"kty": "oct", "k": b64url(b"shared"), "kid": "hmac-1"},
        {"kty": "RSA", "kid": "broken", "n": "!!"},
    ]
}
GOOD = claims(iss="https://idp", aud=["kafka", "other"], scope="kafka.read")


def jwks_validator(**kw: Any) -> JwksValidator:
    return JwksValidator(JWKS, expected_audience="kafka", expected_issuer="https://idp", **kw)


@pytest.mark.parametrize(
    "key, alg, kid",
    [
        (RSA_KEY, "RS256", "rsa-1"),
        (RSA_KEY, "RS512", "rsa-1"),
        (RSA_KEY, "PS256", "rsa-1"),
        (EC_KEY, "ES256", "ec-1"),
        (EC384_KEY, "ES384", "ec-384"),
    ],
)
def test_jwks_accepts_properly_signed_tokens(key, alg, kid):
    token = jwks_validator(required_scope=("kafka.read",)).validate(sign(key, alg, GOOD, {"kid": kid}), NOW_MS)
    assert token.principal == "alice" and token.expiry_ms == (NOW_S + 600) * 1000


def _swap_payload(token: str, payload: dict[str, Any]) -> str:
    head, _, sig = token.split(".")
    return f"{head}.{b64url(json.dumps(payload).encode())}.{sig}"


@pytest.mark.parametrize(
    "make_token, reason",
    [
        (lambda: sign(RSA_KEY_2, "RS256", GOOD, {"kid": "rsa-1"}), "does not verify"),
        (
            lambda: _swap_payload(
                sign(RSA_KEY, "RS256", GOOD, {"kid": "rsa-1"}), claims(sub="admin", iss="https://idp", aud="kafka")
            ),
            "does not verify",
        ),
        (lambda: sign(RSA_KEY, "RS256", GOOD, {"kid": "nope"}), "no key with kid"),
        (lambda: sign(RSA_KEY, "RS256", GOOD, {"kid": "ec-1"}), "no key with kid"),  # kid of a key of another type
        (lambda: sign(EC_KEY, "ES384", GOOD, {"kid": "ec-1"}), "no key with kid"),  # P-256 key, ES384 token
        (lambda: unsecured_jws(GOOD), "algorithm 'none' is not allowed"),
        (
            lambda: b64url(b'{"alg":"HS256","kid":"hmac-1"}') + "." + b64url(json.dumps(GOOD).encode()) + ".c2ln",
            "'HS256' is not allowed",
        ),
        (lambda: sign(RSA_KEY, "RS256", GOOD, {"kid": "broken"}), "no key with kid"),
        (lambda: sign(RSA_KEY, "RS256", GOOD, {"kid": "rsa-1", "crit": ["exp"]}), "critical"),
        (lambda: sign(RSA_KEY, "RS256", GOOD, {"kid": 5}), "'kid' is not a string"),
        (lambda: sign(RSA_KEY, "RS256", claims(iss="https://evil", aud="kafka"), {"kid": "rsa-1"}), "issuer"),
        (lambda: sign(RSA_KEY, "RS256", claims(aud="kafka"), {"kid": "rsa-1"}), "issuer"),
        (lambda: sign(RSA_KEY, "RS256", claims(iss="https://idp", aud="other"), {"kid": "rsa-1"}), "audience"),
        (lambda: sign(RSA_KEY, "RS256", claims(iss="https://idp"), {"kid": "rsa-1"}), "audience"),
        (
            lambda: sign(RSA_KEY, "RS256", claims(iss="https://idp", aud="kafka", exp=NOW_S - 31), {"kid": "rsa-1"}),
            "expired",
        ),
        (lambda: sign(RSA_KEY, "RS256", claims(iss="https://idp", aud="kafka", exp=None), {"kid": "rsa-1"}), "'exp'"),
        (lambda: sign(RSA_KEY, "RS256", claims(iss="https://idp", aud="kafka", sub=None), {"kid": "rsa-1"}), "'sub'"),
        (lambda: sign(RSA_KEY, "RS256", GOOD, {"kid": "rsa-1"})[:-4], "does not verify"),
        (lambda: "a.b", "compact JWS"),
    ],
)
def test_jwks_fails_closed(make_token, reason):
    with pytest.raises(OAuthTokenInvalid, match=reason):
        jwks_validator().validate(make_token(), NOW_MS)


def test_jwks_clock_skew_applies_to_expiry():
    token = sign(
        RSA_KEY, "RS256", claims(iss="https://idp", aud="kafka", iat=NOW_S - 100, exp=NOW_S - 20), {"kid": "rsa-1"}
    )
    assert jwks_validator().validate(token, NOW_MS).principal == "alice"
    with pytest.raises(OAuthTokenInvalid, match="expired"):
        jwks_validator(clock_skew_s=0).validate(token, NOW_MS)


def test_jwks_without_kid_needs_exactly_one_usable_key_and_key_constraints_hold():
    single = JwksValidator({"keys": [jwk(EC_KEY, "only"), jwk(RSA_KEY, "rsa")]})
    assert single.validate(sign(EC_KEY, "ES256", claims()), NOW_MS).principal == "alice"
    two_rsa = JwksValidator({"keys": [jwk(RSA_KEY, "a"), jwk(RSA_KEY_2, "b")]})
    with pytest.raises(OAuthTokenInvalid, match="no 'kid' and the JWKS holds 2 keys"):
        two_rsa.validate(sign(RSA_KEY, "RS256", claims()), NOW_MS)
    encryption_key = JwksValidator({"keys": [jwk(RSA_KEY, "r", use="enc")]})
    with pytest.raises(OAuthTokenInvalid):
        encryption_key.validate(sign(RSA_KEY, "RS256", claims(), {"kid": "r"}), NOW_MS)
    pinned = JwksValidator({"keys": [jwk(RSA_KEY, "r", alg="RS512")]})
    with pytest.raises(OAuthTokenInvalid):
        pinned.validate(sign(RSA_KEY, "RS256", claims(), {"kid": "r"}), NOW_MS)
    assert pinned.validate(sign(RSA_KEY, "RS512", claims(), {"kid": "r"}), NOW_MS).principal == "alice"


def test_jwks_allowed_algorithms_restrict_and_cannot_include_none_or_hmac():
    only_es = JwksValidator(JWKS, allowed_algorithms=("ES256",))
    with pytest.raises(OAuthTokenInvalid, match="not allowed"):
        only_es.validate(sign(RSA_KEY, "RS256", claims(), {"kid": "rsa-1"}), NOW_MS)
    for bad in (("none",), ("HS256",), ()):
        with pytest.raises(SecurityConfigError):
            JwksValidator(JWKS, allowed_algorithms=bad)


def test_jwks_loader_refreshes_on_unknown_kid_at_most_every_interval_and_fails_closed():
    calls: list[int] = []
    sets = [{"keys": [jwk(RSA_KEY, "old")]}, {"keys": [jwk(RSA_KEY_2, "new")]}]

    def loader() -> dict[str, Any]:
        calls.append(1)
        return sets[min(len(calls), 2) - 1]

    validator = JwksValidator(loader, min_refresh_interval_ms=10_000)
    assert validator.validate(sign(RSA_KEY, "RS256", claims(), {"kid": "old"}), NOW_MS).principal == "alice"
    rotated = sign(RSA_KEY_2, "RS256", claims(), {"kid": "new"})
    with pytest.raises(OAuthTokenInvalid, match="no key with kid"):
        validator.validate(rotated, NOW_MS + 1000)  # too soon after the first load: no refetch
    assert len(calls) == 1
    assert validator.validate(rotated, NOW_MS + 11_000).principal == "alice"
    assert len(calls) == 2

    def failing() -> dict[str, Any]:
        raise OSError("connection refused")

    with pytest.raises(OAuthTokenInvalid, match="could not be loaded"):
        JwksValidator(failing).validate(sign(RSA_KEY, "RS256", claims(), {"kid": "old"}), NOW_MS)


def test_server_with_jwks_validator_round_trip():
    token = sign(RSA_KEY, "RS256", GOOD, {"kid": "rsa-1"})
    client = create_client(SaslClientSettings("OAUTHBEARER", token_provider=lambda: (token, NOW_S + 600)))
    srv = server(jwks_validator())
    assert srv.evaluate_response(client.initial_response()) == b""
    assert client.evaluate_challenge(b"") is None
    assert srv.principal == "User:alice" and srv.credential_expiry_ms == (NOW_S + 600) * 1000


# -- load_jwks: the allow-list ----------------------------------------------------------------------


def test_load_jwks_from_an_allowed_file(tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(JWKS))
    for allowed in ([str(path)], [path.resolve().as_uri()], ["file:" + str(path.resolve())]):
        assert load_jwks(str(path), allowed) == JWKS
    assert load_jwks(path.resolve().as_uri(), [path.resolve().as_uri()]) == JWKS


@pytest.mark.parametrize(
    "source, allowed",
    [
        ("/etc/passwd", []),
        ("/etc/passwd", ["/etc/shadow"]),
        ("file:///etc/passwd", ["https://idp/jwks"]),
        ("https://idp/jwks", []),
        ("https://idp/jwks", ["https://idp/jwks/"]),
        ("http://169.254.169.254/latest/meta-data", ["https://idp/jwks"]),
    ],
)
def test_load_jwks_refuses_sources_not_on_the_allow_list(source, allowed):
    with pytest.raises(SecurityConfigError, match="not in the allowed URLs.*CVE-2025-27817"):
        load_jwks(source, allowed)


@pytest.mark.parametrize("source", ["ftp://idp/jwks", "jar:file:/x!/y", "ldap://idp/x"])
def test_load_jwks_refuses_other_schemes(source):
    with pytest.raises(SecurityConfigError, match="only http"):
        load_jwks(source, [source])


class FakeResponse(io.BytesIO):
    def __enter__(self) -> FakeResponse:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def test_load_jwks_over_an_allowed_url():
    seen = []

    def urlopen(request: Any, timeout: float) -> FakeResponse:
        seen.append((request.full_url, timeout))
        return FakeResponse(json.dumps(JWKS).encode())

    assert load_jwks("https://idp/jwks", ["https://idp/jwks"], urlopen=urlopen, timeout_s=3) == JWKS
    assert seen == [("https://idp/jwks", 3)]


@pytest.mark.parametrize(
    "body, reason", [(b"not json", "not JSON"), (b"[]", "'keys'"), (b" " * (1 << 20) + b"{}", "larger")]
)
def test_load_jwks_refuses_bad_documents(tmp_path, body, reason):
    path = tmp_path / "jwks.json"
    path.write_bytes(body)
    with pytest.raises(SecurityConfigError, match=reason):
        load_jwks(str(path), [str(path)])


# -- OIDC client credentials -------------------------------------------------------------------------


def test_oidc_provider_posts_client_credentials_with_basic_auth():
    seen: dict[str, Any] = {}
    token = sign(RSA_KEY, "RS256", claims(exp=NOW_S + 300), {"kid": "rsa-1"})

    def urlopen(request: Any, timeout: float) -> FakeResponse:
        seen.update(
            url=request.full_url, method=request.get_method(), body=request.data, headers=dict(request.header_items())
        )
        return FakeResponse(json.dumps({"access_token": token, "expires_in": 9999}).encode())

    provider = ClientCredentialsTokenProvider(
        "https://idp/token", "my client", "s3cr:t&", scope="kafka", urlopen=urlopen
    )
    assert provider() == (token, NOW_S + 300)  # the JWT's exp wins over expires_in
    assert seen["method"] == "POST" and seen["url"] == "https://idp/token"
    assert seen["body"] == b"grant_type=client_credentials&scope=kafka"
    assert seen["headers"]["Authorization"] == "Basic " + base64.b64encode(b"my+client:s3cr%3At%26").decode()
    assert seen["headers"]["Content-type"] == "application/x-www-form-urlencoded"
    assert "s3cr" not in repr(provider)


def test_oidc_provider_uses_expires_in_for_opaque_tokens():
    provider = ClientCredentialsTokenProvider(
        "https://idp/token",
        "id",
        "secret",
        urlopen=lambda request, timeout: FakeResponse(b'{"access_token":"opaque-token","expires_in":60}'),
        clock_s=lambda: 1000.0,
    )
    assert provider() == ("opaque-token", 1060.0)


@pytest.mark.parametrize(
    "answer, reason",
    [
        (b'{"access_token":"opaque"}', "neither an 'exp'"),
        (b'{"token_type":"bearer"}', "no access_token"),
        (b"<html>", "not JSON"),
    ],
)
def test_oidc_provider_refuses_bad_answers(answer, reason):
    provider = ClientCredentialsTokenProvider(
        "https://idp/token", "id", "hunter2", urlopen=lambda request, timeout: FakeResponse(answer)
    )
    with pytest.raises(SaslAuthenticationFailed, match=reason) as e:
        provider()
    assert "hunter2" not in str(e.value)


def test_oidc_provider_http_error_names_the_status_not_the_secret():
    def urlopen(request: Any, timeout: float) -> FakeResponse:
        raise urllib.error.HTTPError(request.full_url, 401, "Unauthorized", email.message.Message(), None)

    with pytest.raises(SaslAuthenticationFailed, match="HTTP 401") as e:
        ClientCredentialsTokenProvider("https://idp/token", "id", "hunter2", urlopen=urlopen)()
    assert "hunter2" not in str(e.value)


@pytest.mark.parametrize(
    "url, allowed", [("file:///etc/passwd", None), ("ftp://idp/token", None), ("https://idp/token", ["https://other"])]
)
def test_oidc_provider_refuses_endpoints(url, allowed):
    with pytest.raises(SecurityConfigError, match="token.endpoint.url"):
        ClientCredentialsTokenProvider(url, "id", "secret", allowed_urls=allowed)


# -- the same over real HTTP (urllib against a local server) ---------------------------------------------


class _IdpHandler(http.server.BaseHTTPRequestHandler):
    requests: list[tuple[str, str, dict[str, str], bytes]] = []
    token = ""

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest's output clean
        pass

    def _answer(self, body: bytes, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path, dict(self.headers), b""))
        self._answer(json.dumps(JWKS).encode())

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.requests.append(("POST", self.path, dict(self.headers), body))
        if self.headers["Authorization"] != "Basic " + base64.b64encode(b"cid:csecret").decode():
            self._answer(b'{"error":"invalid_client"}', 401)
            return
        self._answer(json.dumps({"access_token": self.token, "token_type": "Bearer", "expires_in": 300}).encode())


@pytest.fixture
def idp():
    _IdpHandler.requests = []
    _IdpHandler.token = sign(RSA_KEY, "RS256", GOOD, {"kid": "rsa-1"})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _IdpHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_oidc_token_over_http_authenticates_against_a_jwks_loaded_over_http(idp):
    provider = ClientCredentialsTokenProvider(f"{idp}/token", "cid", "csecret", scope="kafka")
    validator = JwksValidator(
        functools.partial(load_jwks, f"{idp}/jwks", [f"{idp}/jwks"]),
        expected_audience="kafka",
        expected_issuer="https://idp",
    )
    client = create_client(SaslClientSettings("OAUTHBEARER", token_provider=provider))
    srv = create_server("OAUTHBEARER", SaslServerCallbacks(oauth_validator=validator, clock_ms=lambda: NOW_MS))
    assert srv.evaluate_response(client.initial_response()) == b""
    assert srv.principal == "User:alice" and client.credential_expiry_ms == (NOW_S + 600) * 1000
    methods = [(method, path) for method, path, _, _ in _IdpHandler.requests]
    assert methods == [("POST", "/token"), ("GET", "/jwks")]
    assert _IdpHandler.requests[0][3] == b"grant_type=client_credentials&scope=kafka"


def test_oidc_wrong_client_secret_over_http(idp):
    provider = ClientCredentialsTokenProvider(f"{idp}/token", "cid", "hunter2")
    with pytest.raises(SaslAuthenticationFailed, match="HTTP 401") as e:
        provider()
    assert "hunter2" not in str(e.value)


def test_jwks_url_off_the_allow_list_is_never_fetched(idp):
    validator = JwksValidator(functools.partial(load_jwks, f"{idp}/jwks", [f"{idp}/other"]))
    with pytest.raises(OAuthTokenInvalid, match="could not be loaded.*not in the allowed URLs"):
        validator.validate(sign(RSA_KEY, "RS256", GOOD, {"kid": "rsa-1"}), NOW_MS)
    assert _IdpHandler.requests == []
