"""SaslHandshake (key 17), v0-1; never flexible. v0 is followed by raw SASL tokens, v1 by SaslAuthenticate requests."""

from ..schema import declare_api

API = declare_api(
    17,
    "SaslHandshake",
    versions="0-1",
    flexible="none",
    request="""
        mechanism                  string
    """,
    response="""
        error_code                 int16
        mechanisms                 []string
    """,
)
