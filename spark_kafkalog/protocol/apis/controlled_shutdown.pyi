# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class ControlledShutdownRequest(Message):
    broker_id: int
    broker_epoch: int  # v2+
    def __init__(
        self, *, broker_id: int = ..., broker_epoch: int = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

class ControlledShutdownResponse(Message):
    class RemainingPartition(Message):
        topic_name: str
        partition_index: int
        def __init__(
            self, *, topic_name: str = ..., partition_index: int = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    error_code: int
    remaining_partitions: list[RemainingPartition]
    def __init__(
        self,
        *,
        error_code: int = ...,
        remaining_partitions: list[RemainingPartition] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ControlledShutdownRequest, ControlledShutdownResponse]
