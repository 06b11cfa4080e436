"""ConsumerProtocolSubscription (JoinGroup member metadata, protocol type "consumer"), v0-3; never flexible.
v1+ owned partitions (cooperative rebalancing), v2+ generation id, v3+ rack id."""

from ..schema import declare_data

DATA = declare_data(
    "ConsumerProtocolSubscription",
    versions="0-3",
    flexible="none",
    fields="""
        topics                     []string
        user_data                  bytes?      default=null
        owned_partitions           []TopicPartition  v1+
          topic                    string
          partitions               []int32
        generation_id              int32       v2+ default=-1
        rack_id                    string?     v3+ default=null
    """,
)
