# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class EndTxnRequest(Message):
    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool
    def __init__(
        self,
        *,
        transactional_id: str = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        committed: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class EndTxnResponse(Message):
    throttle_time_ms: int
    error_code: int
    producer_id: int  # v5+
    producer_epoch: int  # v5+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[EndTxnRequest, EndTxnResponse]
