"""AlterClientQuotas (key 49), v0-1; flexible from v1 (KIP-546).
Each entry names a quota entity (its ``user`` / ``client-id`` / ``ip`` components; a null name is the
``<default>`` entity) and the ops on its quota keys: set ``key`` to ``value`` (a double; integer keys must hold
a whole number) or remove it. ``validate_only`` checks without writing. One result per entry, with the entity as
sent."""

from ..schema import declare_api

API = declare_api(
    49,
    "AlterClientQuotas",
    versions="0-1",
    flexible="1+",
    request="""
        entries                    []EntryData
          entity                   []EntityData
            entity_type            string
            entity_name            string?
          ops                      []OpData
            key                    string
            value                  float64
            remove                 bool
        validate_only              bool
    """,
    response="""
        throttle_time_ms           int32
        entries                    []EntryData
          error_code               int16
          error_message            string?
          entity                   []EntityData
            entity_type            string
            entity_name            string?
    """,
)
