# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class MetadataRequest(Message):
    class MetadataRequestTopic(Message):
        topic_id: UUID  # v10+
        name: str | None  # null v10-13
        def __init__(
            self, *, topic_id: UUID = ..., name: str | None = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    topics: list[MetadataRequestTopic] | None  # null v1-13
    allow_auto_topic_creation: bool  # v4+
    include_cluster_authorized_operations: bool  # v8-10
    include_topic_authorized_operations: bool  # v8+
    def __init__(
        self,
        *,
        topics: list[MetadataRequestTopic] | None = ...,
        allow_auto_topic_creation: bool = ...,
        include_cluster_authorized_operations: bool = ...,
        include_topic_authorized_operations: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class MetadataResponse(Message):
    class MetadataResponseBroker(Message):
        node_id: int
        host: str
        port: int
        rack: str | None  # v1+
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class MetadataResponseTopic(Message):
        class MetadataResponsePartition(Message):
            error_code: int
            partition_index: int
            leader_id: int
            leader_epoch: int  # v7+
            replica_nodes: list[int]
            isr_nodes: list[int]
            offline_replicas: list[int]  # v5+
            def __init__(
                self,
                *,
                error_code: int = ...,
                partition_index: int = ...,
                leader_id: int = ...,
                leader_epoch: int = ...,
                replica_nodes: list[int] = ...,
                isr_nodes: list[int] = ...,
                offline_replicas: list[int] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        error_code: int
        name: str | None  # null v12-13
        topic_id: UUID  # v10+
        is_internal: bool  # v1+
        partitions: list[MetadataResponsePartition]
        topic_authorized_operations: int  # v8+
        def __init__(
            self,
            *,
            error_code: int = ...,
            name: str | None = ...,
            topic_id: UUID = ...,
            is_internal: bool = ...,
            partitions: list[MetadataResponsePartition] = ...,
            topic_authorized_operations: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v3+
    brokers: list[MetadataResponseBroker]
    cluster_id: str | None  # v2+
    controller_id: int  # v1+
    topics: list[MetadataResponseTopic]
    cluster_authorized_operations: int  # v8-10
    error_code: int  # v13+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        brokers: list[MetadataResponseBroker] = ...,
        cluster_id: str | None = ...,
        controller_id: int = ...,
        topics: list[MetadataResponseTopic] = ...,
        cluster_authorized_operations: int = ...,
        error_code: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[MetadataRequest, MetadataResponse]
