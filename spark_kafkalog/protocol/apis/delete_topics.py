"""DeleteTopics (key 20), v0-6; flexible from v4.
v0-5 name topics in topic_names; v6+ in topics (name or topic id), with nullable result names."""

from ..schema import declare_api

API = declare_api(
    20,
    "DeleteTopics",
    versions="0-6",
    flexible="4+",
    request="""
        topics                     []DeleteTopicState  v6+
          name                     string?     default=null
          topic_id                 uuid
        topic_names                []string    v0-5
        timeout_ms                 int32
    """,
    response="""
        throttle_time_ms           int32       v1+
        responses                  []DeletableTopicResult
          name                     string      null6+
          topic_id                 uuid        v6+
          error_code               int16
          error_message            string?     v5+ default=null
    """,
)
