"""Fields declared ``secret`` (AlterUserScramCredentials' salted password) never show in a message's repr, and
still travel on the wire unchanged."""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, decode_request, encode_request


def test_salted_password_is_redacted_in_repr_and_kept_on_the_wire():
    R = API_BY_KEY[ApiKey.ALTER_USER_SCRAM_CREDENTIALS].Request
    salted = bytes(range(32))
    body = R(
        upsertions=[
            R.ScramCredentialUpsertion(name="alice", mechanism=1, iterations=8192, salt=b"salt", salted_password=salted)
        ]
    )
    text = repr(body)
    assert "salted_password=<redacted>" in text and repr(salted) not in text
    assert "name='alice'" in text and "salt=b'salt'" in text and "iterations=8192" in text
    decoded = decode_request(encode_request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, 7, body, client_id="t"))
    assert decoded.body.upsertions[0].salted_password == salted


def test_only_fields_declared_secret_are_redacted():
    secret = {
        (api.name, f.name)
        for api in API_BY_KEY.values()
        for struct in (api.request, api.response)
        for s in struct.walk()
        for f in s.fields
        if f.secret
    }
    assert secret == {("AlterUserScramCredentials", "salted_password")}
