# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class AlterConfigsRequest(Message):
    class AlterConfigsResource(Message):
        class AlterableConfig(Message):
            name: str
            value: str | None
            def __init__(
                self, *, name: str = ..., value: str | None = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        resource_type: int
        resource_name: str
        configs: list[AlterableConfig]
        def __init__(
            self,
            *,
            resource_type: int = ...,
            resource_name: str = ...,
            configs: list[AlterableConfig] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    resources: list[AlterConfigsResource]
    validate_only: bool
    def __init__(
        self,
        *,
        resources: list[AlterConfigsResource] = ...,
        validate_only: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class AlterConfigsResponse(Message):
    class AlterConfigsResourceResponse(Message):
        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            resource_type: int = ...,
            resource_name: str = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    responses: list[AlterConfigsResourceResponse]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        responses: list[AlterConfigsResourceResponse] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[AlterConfigsRequest, AlterConfigsResponse]
