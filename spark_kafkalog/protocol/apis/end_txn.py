"""EndTxn (key 26), v0-5; flexible from v3. Commits (``committed`` true) or aborts a transaction
(v4 only adds TRANSACTION_ABORTABLE; v5, transactions v2 (KIP-890 part 2), bumps the producer epoch on every
transaction end and answers the producer id and epoch to use next)."""

from ..schema import declare_api

API = declare_api(
    26,
    "EndTxn",
    versions="0-5",
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
        producer_id                int64       v5+ default=-1
        producer_epoch             int16       v5+ default=-1
    """,
)
