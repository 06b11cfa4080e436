# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class FindCoordinatorRequest(Message):
    key: str  # v0-3
    key_type: int  # v1+
    coordinator_keys: list[str]  # v4+
    def __init__(
        self,
        *,
        key: str = ...,
        key_type: int = ...,
        coordinator_keys: list[str] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class FindCoordinatorResponse(Message):
    class Coordinator(Message):
        key: str
        node_id: int
        host: str
        port: int
        error_code: int
        error_message: str | None
        def __init__(
            self,
            *,
            key: str = ...,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v1+
    error_code: int  # v0-3
    error_message: str | None  # v1-3
    node_id: int  # v0-3
    host: str  # v0-3
    port: int  # v0-3
    coordinators: list[Coordinator]  # v4+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        node_id: int = ...,
        host: str = ...,
        port: int = ...,
        coordinators: list[Coordinator] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[FindCoordinatorRequest, FindCoordinatorResponse]
