# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DescribeConfigsRequest(Message):
    class DescribeConfigsResource(Message):
        resource_type: int
        resource_name: str
        configuration_keys: list[str] | None
        def __init__(
            self,
            *,
            resource_type: int = ...,
            resource_name: str = ...,
            configuration_keys: list[str] | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    resources: list[DescribeConfigsResource]
    include_synonyms: bool  # v1+
    include_documentation: bool  # v3+
    def __init__(
        self,
        *,
        resources: list[DescribeConfigsResource] = ...,
        include_synonyms: bool = ...,
        include_documentation: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class DescribeConfigsResponse(Message):
    class DescribeConfigsResult(Message):
        class DescribeConfigsResourceResult(Message):
            class DescribeConfigsSynonym(Message):
                name: str
                value: str | None
                source: int
                def __init__(
                    self,
                    *,
                    name: str = ...,
                    value: str | None = ...,
                    source: int = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            name: str
            value: str | None
            read_only: bool
            is_default: bool  # v0
            config_source: int  # v1+
            is_sensitive: bool
            synonyms: list[DescribeConfigsSynonym]  # v1+
            config_type: int  # v3+
            documentation: str | None  # v3+
            def __init__(
                self,
                *,
                name: str = ...,
                value: str | None = ...,
                read_only: bool = ...,
                is_default: bool = ...,
                config_source: int = ...,
                is_sensitive: bool = ...,
                synonyms: list[DescribeConfigsSynonym] = ...,
                config_type: int = ...,
                documentation: str | None = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str
        configs: list[DescribeConfigsResourceResult]
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            resource_type: int = ...,
            resource_name: str = ...,
            configs: list[DescribeConfigsResourceResult] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    results: list[DescribeConfigsResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[DescribeConfigsResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeConfigsRequest, DescribeConfigsResponse]
