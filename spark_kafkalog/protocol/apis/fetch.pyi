# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from typing import Any
from uuid import UUID

from ..schema import ApiSpec, Message

class FetchRequest(Message):
    class ReplicaState(Message):
        replica_id: int
        replica_epoch: int
        def __init__(
            self, *, replica_id: int = ..., replica_epoch: int = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    class FetchTopic(Message):
        class FetchPartition(Message):
            partition: int
            current_leader_epoch: int  # v9+
            fetch_offset: int
            last_fetched_epoch: int  # v12+
            log_start_offset: int  # v5+
            partition_max_bytes: int
            replica_directory_id: UUID  # v17+, tag 0
            high_watermark: int  # v18+, tag 1
            def __init__(
                self,
                *,
                partition: int = ...,
                current_leader_epoch: int = ...,
                fetch_offset: int = ...,
                last_fetched_epoch: int = ...,
                log_start_offset: int = ...,
                partition_max_bytes: int = ...,
                replica_directory_id: UUID = ...,
                high_watermark: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        topic: str  # v0-12
        topic_id: UUID  # v13+
        partitions: list[FetchPartition]
        def __init__(
            self,
            *,
            topic: str = ...,
            topic_id: UUID = ...,
            partitions: list[FetchPartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class ForgottenTopic(Message):
        topic: str  # v7-12
        topic_id: UUID  # v13+
        partitions: list[int]
        def __init__(
            self,
            *,
            topic: str = ...,
            topic_id: UUID = ...,
            partitions: list[int] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    cluster_id: str | None  # v12+, tag 0
    replica_id: int  # v0-14
    replica_state: ReplicaState  # v15+, tag 1
    max_wait_ms: int
    min_bytes: int
    max_bytes: int  # v3+
    isolation_level: int  # v4+
    session_id: int  # v7+
    session_epoch: int  # v7+
    topics: list[FetchTopic]
    forgotten_topics_data: list[ForgottenTopic]  # v7+
    rack_id: str  # v11+
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        replica_id: int = ...,
        replica_state: ReplicaState = ...,
        max_wait_ms: int = ...,
        min_bytes: int = ...,
        max_bytes: int = ...,
        isolation_level: int = ...,
        session_id: int = ...,
        session_epoch: int = ...,
        topics: list[FetchTopic] = ...,
        forgotten_topics_data: list[ForgottenTopic] = ...,
        rack_id: str = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class FetchResponse(Message):
    class FetchableTopicResponse(Message):
        class PartitionData(Message):
            class EpochEndOffset(Message):
                epoch: int
                end_offset: int
                def __init__(
                    self, *, epoch: int = ..., end_offset: int = ..., unknown_tags: dict[int, bytes] | None = ...
                ) -> None: ...

            class LeaderIdAndEpoch(Message):
                leader_id: int
                leader_epoch: int
                def __init__(
                    self, *, leader_id: int = ..., leader_epoch: int = ..., unknown_tags: dict[int, bytes] | None = ...
                ) -> None: ...

            class SnapshotId(Message):
                end_offset: int
                epoch: int
                def __init__(
                    self, *, end_offset: int = ..., epoch: int = ..., unknown_tags: dict[int, bytes] | None = ...
                ) -> None: ...

            class AbortedTransaction(Message):
                producer_id: int
                first_offset: int
                def __init__(
                    self,
                    *,
                    producer_id: int = ...,
                    first_offset: int = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            partition_index: int
            error_code: int
            high_watermark: int
            last_stable_offset: int  # v4+
            log_start_offset: int  # v5+
            diverging_epoch: EpochEndOffset  # v12+, tag 0
            current_leader: LeaderIdAndEpoch  # v12+, tag 1
            snapshot_id: SnapshotId  # v12+, tag 2
            aborted_transactions: list[AbortedTransaction] | None  # v4+
            preferred_read_replica: int  # v11+
            records: Any
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                high_watermark: int = ...,
                last_stable_offset: int = ...,
                log_start_offset: int = ...,
                diverging_epoch: EpochEndOffset = ...,
                current_leader: LeaderIdAndEpoch = ...,
                snapshot_id: SnapshotId = ...,
                aborted_transactions: list[AbortedTransaction] | None = ...,
                preferred_read_replica: int = ...,
                records: Any = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        topic: str  # v0-12
        topic_id: UUID  # v13+
        partitions: list[PartitionData]
        def __init__(
            self,
            *,
            topic: str = ...,
            topic_id: UUID = ...,
            partitions: list[PartitionData] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class NodeEndpoint(Message):
        node_id: int
        host: str
        port: int
        rack: str | None
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v1+
    error_code: int  # v7+
    session_id: int  # v7+
    responses: list[FetchableTopicResponse]
    node_endpoints: list[NodeEndpoint]  # v16+, tag 0
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        session_id: int = ...,
        responses: list[FetchableTopicResponse] = ...,
        node_endpoints: list[NodeEndpoint] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[FetchRequest, FetchResponse]
