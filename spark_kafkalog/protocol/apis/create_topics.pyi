# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class CreateTopicsRequest(Message):
    class CreatableTopic(Message):
        class CreatableReplicaAssignment(Message):
            partition_index: int
            broker_ids: list[int]
            def __init__(
                self,
                *,
                partition_index: int = ...,
                broker_ids: list[int] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        class CreatableTopicConfig(Message):
            name: str
            value: str | None
            def __init__(
                self, *, name: str = ..., value: str | None = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        name: str
        num_partitions: int
        replication_factor: int
        assignments: list[CreatableReplicaAssignment]
        configs: list[CreatableTopicConfig]
        def __init__(
            self,
            *,
            name: str = ...,
            num_partitions: int = ...,
            replication_factor: int = ...,
            assignments: list[CreatableReplicaAssignment] = ...,
            configs: list[CreatableTopicConfig] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    topics: list[CreatableTopic]
    timeout_ms: int
    validate_only: bool  # v1+
    def __init__(
        self,
        *,
        topics: list[CreatableTopic] = ...,
        timeout_ms: int = ...,
        validate_only: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class CreateTopicsResponse(Message):
    class CreatableTopicResult(Message):
        class CreatableTopicConfigs(Message):
            name: str
            value: str | None
            read_only: bool
            config_source: int
            is_sensitive: bool
            def __init__(
                self,
                *,
                name: str = ...,
                value: str | None = ...,
                read_only: bool = ...,
                config_source: int = ...,
                is_sensitive: bool = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        topic_id: UUID  # v7+
        error_code: int
        error_message: str | None  # v1+
        topic_config_error_code: int  # v5+, tag 0
        num_partitions: int  # v5+
        replication_factor: int  # v5+
        configs: list[CreatableTopicConfigs] | None  # v5+
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: UUID = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            topic_config_error_code: int = ...,
            num_partitions: int = ...,
            replication_factor: int = ...,
            configs: list[CreatableTopicConfigs] | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v2+
    topics: list[CreatableTopicResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[CreatableTopicResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[CreateTopicsRequest, CreateTopicsResponse]
