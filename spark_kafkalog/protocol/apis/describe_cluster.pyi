# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DescribeClusterRequest(Message):
    include_cluster_authorized_operations: bool
    endpoint_type: int  # v1+
    include_fenced_brokers: bool  # v2+
    def __init__(
        self,
        *,
        include_cluster_authorized_operations: bool = ...,
        endpoint_type: int = ...,
        include_fenced_brokers: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class DescribeClusterResponse(Message):
    class DescribeClusterBroker(Message):
        broker_id: int
        host: str
        port: int
        rack: str | None
        is_fenced: bool  # v2+
        def __init__(
            self,
            *,
            broker_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
            is_fenced: bool = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    endpoint_type: int  # v1+
    cluster_id: str
    controller_id: int
    brokers: list[DescribeClusterBroker]
    cluster_authorized_operations: int
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        endpoint_type: int = ...,
        cluster_id: str = ...,
        controller_id: int = ...,
        brokers: list[DescribeClusterBroker] = ...,
        cluster_authorized_operations: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeClusterRequest, DescribeClusterResponse]
