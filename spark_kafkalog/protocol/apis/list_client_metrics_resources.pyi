# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class ListClientMetricsResourcesRequest(Message):
    def __init__(self, *, unknown_tags: dict[int, bytes] | None = ...) -> None: ...

class ListClientMetricsResourcesResponse(Message):
    class ClientMetricsResource(Message):
        name: str
        def __init__(self, *, name: str = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

    throttle_time_ms: int
    error_code: int
    client_metrics_resources: list[ClientMetricsResource]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        client_metrics_resources: list[ClientMetricsResource] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ListClientMetricsResourcesRequest, ListClientMetricsResourcesResponse]
