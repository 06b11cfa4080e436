# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class AlterUserScramCredentialsRequest(Message):
    class ScramCredentialDeletion(Message):
        name: str
        mechanism: int
        def __init__(
            self, *, name: str = ..., mechanism: int = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    class ScramCredentialUpsertion(Message):
        name: str
        mechanism: int
        iterations: int
        salt: bytes
        salted_password: bytes
        def __init__(
            self,
            *,
            name: str = ...,
            mechanism: int = ...,
            iterations: int = ...,
            salt: bytes = ...,
            salted_password: bytes = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    deletions: list[ScramCredentialDeletion]
    upsertions: list[ScramCredentialUpsertion]
    def __init__(
        self,
        *,
        deletions: list[ScramCredentialDeletion] = ...,
        upsertions: list[ScramCredentialUpsertion] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class AlterUserScramCredentialsResponse(Message):
    class AlterUserScramCredentialsResult(Message):
        user: str
        error_code: int
        error_message: str | None
        def __init__(
            self,
            *,
            user: str = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    results: list[AlterUserScramCredentialsResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[AlterUserScramCredentialsResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse]
