# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class SaslAuthenticateRequest(Message):
    auth_bytes: bytes
    def __init__(self, *, auth_bytes: bytes = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

class SaslAuthenticateResponse(Message):
    error_code: int
    error_message: str | None
    auth_bytes: bytes
    session_lifetime_ms: int  # v1+
    def __init__(
        self,
        *,
        error_code: int = ...,
        error_message: str | None = ...,
        auth_bytes: bytes = ...,
        session_lifetime_ms: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[SaslAuthenticateRequest, SaslAuthenticateResponse]
