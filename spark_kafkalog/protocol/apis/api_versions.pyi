# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class ApiVersionsRequest(Message):
    client_software_name: str  # v3+
    client_software_version: str  # v3+
    cluster_id: str | None  # v5+
    node_id: int  # v5+
    def __init__(
        self,
        *,
        client_software_name: str = ...,
        client_software_version: str = ...,
        cluster_id: str | None = ...,
        node_id: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ApiVersionsResponse(Message):
    class ApiVersion(Message):
        api_key: int
        min_version: int
        max_version: int
        def __init__(
            self,
            *,
            api_key: int = ...,
            min_version: int = ...,
            max_version: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class SupportedFeatureKey(Message):
        name: str
        min_version: int
        max_version: int
        def __init__(
            self,
            *,
            name: str = ...,
            min_version: int = ...,
            max_version: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class FinalizedFeatureKey(Message):
        name: str
        max_version_level: int
        min_version_level: int
        def __init__(
            self,
            *,
            name: str = ...,
            max_version_level: int = ...,
            min_version_level: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    error_code: int
    api_keys: list[ApiVersion]
    throttle_time_ms: int  # v1+
    supported_features: list[SupportedFeatureKey]  # v3+, tag 0
    finalized_features_epoch: int  # v3+, tag 1
    finalized_features: list[FinalizedFeatureKey]  # v3+, tag 2
    zk_migration_ready: bool  # v3+, tag 3
    def __init__(
        self,
        *,
        error_code: int = ...,
        api_keys: list[ApiVersion] = ...,
        throttle_time_ms: int = ...,
        supported_features: list[SupportedFeatureKey] = ...,
        finalized_features_epoch: int = ...,
        finalized_features: list[FinalizedFeatureKey] = ...,
        zk_migration_ready: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ApiVersionsRequest, ApiVersionsResponse]
