"""AddOffsetsToTxn (key 25), v0-4; flexible from v3. Adds a group's ``__consumer_offsets`` partition to a
transaction (v4 only marks KIP-890 clients)."""

from ..schema import declare_api

API = declare_api(
    25,
    "AddOffsetsToTxn",
    versions="0-4",
    flexible="3+",
    request="""
        transactional_id           string
        producer_id                int64
        producer_epoch             int16
        group_id                   string
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
    """,
)
