"""SaslAuthenticate (key 36), v0-2; flexible from v2. v1+ reports the session lifetime (KIP-368)."""

from ..schema import declare_api

API = declare_api(
    36,
    "SaslAuthenticate",
    versions="0-2",
    flexible="2+",
    request="""
        auth_bytes                 bytes
    """,
    response="""
        error_code                 int16
        error_message              string?
        auth_bytes                 bytes
        session_lifetime_ms        int64       v1+ default=0
    """,
)
