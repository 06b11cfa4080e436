# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class InitProducerIdRequest(Message):
    transactional_id: str | None
    transaction_timeout_ms: int
    producer_id: int  # v3+
    producer_epoch: int  # v3+
    def __init__(
        self,
        *,
        transactional_id: str | None = ...,
        transaction_timeout_ms: int = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class InitProducerIdResponse(Message):
    throttle_time_ms: int
    error_code: int
    producer_id: int
    producer_epoch: int
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[InitProducerIdRequest, InitProducerIdResponse]
