# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import DataSpec, Message

class ConsumerProtocolAssignment(Message):
    class TopicPartition(Message):
        topic: str
        partitions: list[int]
        def __init__(
            self, *, topic: str = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    assigned_partitions: list[TopicPartition]
    user_data: bytes | None
    def __init__(
        self,
        *,
        assigned_partitions: list[TopicPartition] = ...,
        user_data: bytes | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

DATA: DataSpec[ConsumerProtocolAssignment]
