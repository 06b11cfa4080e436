# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DescribeUserScramCredentialsRequest(Message):
    class UserName(Message):
        name: str
        def __init__(self, *, name: str = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

    users: list[UserName] | None
    def __init__(self, *, users: list[UserName] | None = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

class DescribeUserScramCredentialsResponse(Message):
    class DescribeUserScramCredentialsResult(Message):
        class CredentialInfo(Message):
            mechanism: int
            iterations: int
            def __init__(
                self, *, mechanism: int = ..., iterations: int = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        user: str
        error_code: int
        error_message: str | None
        credential_infos: list[CredentialInfo]
        def __init__(
            self,
            *,
            user: str = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            credential_infos: list[CredentialInfo] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    results: list[DescribeUserScramCredentialsResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        results: list[DescribeUserScramCredentialsResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse]
