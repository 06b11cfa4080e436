# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class CreateAclsRequest(Message):
    class AclCreation(Message):
        resource_type: int
        resource_name: str
        resource_pattern_type: int  # v1+
        principal: str
        host: str
        operation: int
        permission_type: int
        def __init__(
            self,
            *,
            resource_type: int = ...,
            resource_name: str = ...,
            resource_pattern_type: int = ...,
            principal: str = ...,
            host: str = ...,
            operation: int = ...,
            permission_type: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    creations: list[AclCreation]
    def __init__(self, *, creations: list[AclCreation] = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

class CreateAclsResponse(Message):
    class AclCreationResult(Message):
        error_code: int
        error_message: str | None
        def __init__(
            self, *, error_code: int = ..., error_message: str | None = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    throttle_time_ms: int
    results: list[AclCreationResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[AclCreationResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[CreateAclsRequest, CreateAclsResponse]
