"""DeleteShareGroupOffsets (key 92), v0, flexible (KIP-932; admin to group coordinator).
Deletes the share-partition state of whole topics from an empty share group (NON_EMPTY_GROUP otherwise). Errors
for the whole request and per topic.
"""

from ..schema import declare_api

API = declare_api(
    92,
    "DeleteShareGroupOffsets",
    versions="0",
    flexible="0+",
    request="""
        group_id                   string
        topics                     []DeleteShareGroupOffsetsRequestTopic
          topic_name               string
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?     default=null
        responses                  []DeleteShareGroupOffsetsResponseTopic
          topic_name               string
          topic_id                 uuid
          error_code               int16
          error_message            string?     default=null
    """,
)
