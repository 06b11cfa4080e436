# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import DataSpec, Message

class ConsumerProtocolSubscription(Message):
    class TopicPartition(Message):
        topic: str
        partitions: list[int]
        def __init__(
            self, *, topic: str = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    topics: list[str]
    user_data: bytes | None
    owned_partitions: list[TopicPartition]  # v1+
    generation_id: int  # v2+
    rack_id: str | None  # v3+
    def __init__(
        self,
        *,
        topics: list[str] = ...,
        user_data: bytes | None = ...,
        owned_partitions: list[TopicPartition] = ...,
        generation_id: int = ...,
        rack_id: str | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

DATA: DataSpec[ConsumerProtocolSubscription]
