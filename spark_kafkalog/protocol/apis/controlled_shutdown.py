"""ControlledShutdown (key 7), v1-3; flexible from v3. A stopping broker asks the controller to move the
leadership of its partitions away; the answer lists the partitions it still leads.
v0 (request header v0, without client id) is not declared; v2+ carry the broker epoch."""

from ..schema import declare_api

API = declare_api(
    7,
    "ControlledShutdown",
    versions="1-3",
    flexible="3+",
    request="""
        broker_id                  int32
        broker_epoch               int64       v2+ default=-1
    """,
    response="""
        error_code                 int16
        remaining_partitions       []RemainingPartition
          topic_name               string
          partition_index          int32
    """,
)
