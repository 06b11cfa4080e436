"""InitProducerId (key 22), v0-5; flexible from v2.
v3+ may pass the current producer id and epoch to bump the epoch (KIP-360); v5 may answer TRANSACTION_ABORTABLE (KIP-890).
v6 (two-phase commit, KIP-939) is not declared: Kafka 4.4 marks it unstable."""

from ..schema import declare_api

API = declare_api(
    22,
    "InitProducerId",
    versions="0-5",
    flexible="2+",
    request="""
        transactional_id           string?
        transaction_timeout_ms     int32
        producer_id                int64       v3+ default=-1
        producer_epoch             int16       v3+ default=-1
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        producer_id                int64       default=-1
        producer_epoch             int16
    """,
)
