# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DeleteAclsRequest(Message):
    class DeleteAclsFilter(Message):
        resource_type_filter: int
        resource_name_filter: str | None
        pattern_type_filter: int  # v1+
        principal_filter: str | None
        host_filter: str | None
        operation: int
        permission_type: int
        def __init__(
            self,
            *,
            resource_type_filter: int = ...,
            resource_name_filter: str | None = ...,
            pattern_type_filter: int = ...,
            principal_filter: str | None = ...,
            host_filter: str | None = ...,
            operation: int = ...,
            permission_type: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    filters: list[DeleteAclsFilter]
    def __init__(
        self, *, filters: list[DeleteAclsFilter] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

class DeleteAclsResponse(Message):
    class DeleteAclsFilterResult(Message):
        class DeleteAclsMatchingAcl(Message):
            error_code: int
            error_message: str | None
            resource_type: int
            resource_name: str
            pattern_type: int  # v1+
            principal: str
            host: str
            operation: int
            permission_type: int
            def __init__(
                self,
                *,
                error_code: int = ...,
                error_message: str | None = ...,
                resource_type: int = ...,
                resource_name: str = ...,
                pattern_type: int = ...,
                principal: str = ...,
                host: str = ...,
                operation: int = ...,
                permission_type: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        error_code: int
        error_message: str | None
        matching_acls: list[DeleteAclsMatchingAcl]
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            matching_acls: list[DeleteAclsMatchingAcl] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    filter_results: list[DeleteAclsFilterResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        filter_results: list[DeleteAclsFilterResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DeleteAclsRequest, DeleteAclsResponse]
