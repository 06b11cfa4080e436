"""DescribeClientQuotas (key 48), v0-1; flexible from v1 (KIP-546).
A filter of components (entity type ``user`` / ``client-id`` / ``ip``; match type 0 = exact name, 1 = default
entity, 2 = any specified name including the default; ``match`` is null unless exact) and ``strict`` (leave out
entities with types the filter does not name); the answer lists each matching entity (a null name is the
``<default>`` entity) with its quota values as doubles. One top-level error; ``entries`` is null when it is set."""

from ..schema import declare_api

API = declare_api(
    48,
    "DescribeClientQuotas",
    versions="0-1",
    flexible="1+",
    request="""
        components                 []ComponentData
          entity_type              string
          match_type               int8
          match                    string?
        strict                     bool
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?
        entries                    []EntryData?
          entity                   []EntityData
            entity_type            string
            entity_name            string?
          values                   []ValueData
            key                    string
            value                  float64
    """,
)
