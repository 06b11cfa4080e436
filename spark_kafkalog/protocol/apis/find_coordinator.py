"""FindCoordinator (key 10), v0-6; flexible from v3.
v0 finds group coordinators only (no key_type); v4+ batch keys (``coordinator_keys`` in, one
``coordinators`` entry per key out, KIP-699); v5 (TRANSACTION_ABORTABLE) and v6 (share groups, key type 2)
keep v4's shape."""

from ..schema import declare_api

API = declare_api(
    10,
    "FindCoordinator",
    versions="0-6",
    flexible="3+",
    request="""
        key                        string      v0-3
        key_type                   int8        v1+ default=0
        coordinator_keys           []string    v4+
    """,
    response="""
        throttle_time_ms           int32       v1+
        error_code                 int16       v0-3
        error_message              string?     v1-3
        node_id                    int32       v0-3
        host                       string      v0-3
        port                       int32       v0-3
        coordinators               []Coordinator  v4+
          key                      string
          node_id                  int32
          host                     string
          port                     int32
          error_code               int16
          error_message            string?
    """,
)
