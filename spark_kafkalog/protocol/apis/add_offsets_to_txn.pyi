# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class AddOffsetsToTxnRequest(Message):
    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str
    def __init__(
        self,
        *,
        transactional_id: str = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        group_id: str = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class AddOffsetsToTxnResponse(Message):
    throttle_time_ms: int
    error_code: int
    def __init__(
        self, *, throttle_time_ms: int = ..., error_code: int = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

API: ApiSpec[AddOffsetsToTxnRequest, AddOffsetsToTxnResponse]
