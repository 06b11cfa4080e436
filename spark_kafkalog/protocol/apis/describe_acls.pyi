# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DescribeAclsRequest(Message):
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

class DescribeAclsResponse(Message):
    class DescribeAclsResource(Message):
        class AclDescription(Message):
            principal: str
            host: str
            operation: int
            permission_type: int
            def __init__(
                self,
                *,
                principal: str = ...,
                host: str = ...,
                operation: int = ...,
                permission_type: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        resource_type: int
        resource_name: str
        pattern_type: int  # v1+
        acls: list[AclDescription]
        def __init__(
            self,
            *,
            resource_type: int = ...,
            resource_name: str = ...,
            pattern_type: int = ...,
            acls: list[AclDescription] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    resources: list[DescribeAclsResource]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        resources: list[DescribeAclsResource] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeAclsRequest, DescribeAclsResponse]
