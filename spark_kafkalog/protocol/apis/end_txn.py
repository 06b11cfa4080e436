"""EndTxn (key 26), v0-4; flexible from v3. Commits (``committed`` true) or aborts a transaction
(v4 only marks KIP-890 clients)."""

from ..schema import declare_api

API = declare_api(
    26,
    "EndTxn",
    versions="0-4",
    flexible="3+",
    request="""
        transactional_id           string
        producer_id                int64
        producer_epoch             int16
        committed                  bool
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
    """,
)
