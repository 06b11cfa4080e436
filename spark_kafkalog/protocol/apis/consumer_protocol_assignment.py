"""ConsumerProtocolAssignment (SyncGroup member assignment, protocol type "consumer"), v0-3; never flexible.
All versions share one layout; v1-3 only keep in step with ConsumerProtocolSubscription."""

from ..schema import declare_data

DATA = declare_data(
    "ConsumerProtocolAssignment",
    versions="0-3",
    flexible="none",
    fields="""
        assigned_partitions        []TopicPartition
          topic                    string
          partitions               []int32
        user_data                  bytes?      default=null
    """,
)
