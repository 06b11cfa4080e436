"""ListTransactions (key 66), v0-2; flexible. Transactions a broker coordinates, filtered by state and
producer id; v1 adds a minimum running time (``duration_filter`` ms, -1 none; KIP-994), v2 a transactional id regular expression
(``transactional_id_pattern``, null or empty: none; KIP-1152)."""

from ..schema import declare_api

API = declare_api(
    66,
    "ListTransactions",
    versions="0-2",
    flexible="0+",
    request="""
        state_filters              []string
        producer_id_filters        []int64
        duration_filter            int64       v1+ default=-1
        transactional_id_pattern   string?     v2+ default=null
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        unknown_state_filters      []string
        transaction_states         []TransactionState
          transactional_id         string
          producer_id              int64
          transaction_state        string
    """,
)
