# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class SaslHandshakeRequest(Message):
    mechanism: str
    def __init__(self, *, mechanism: str = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

class SaslHandshakeResponse(Message):
    error_code: int
    mechanisms: list[str]
    def __init__(
        self, *, error_code: int = ..., mechanisms: list[str] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

API: ApiSpec[SaslHandshakeRequest, SaslHandshakeResponse]
