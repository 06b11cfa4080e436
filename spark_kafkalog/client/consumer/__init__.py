"""The consumer (Kafka's ``clients/consumer``): ``Consumer`` and its consumer-group membership.

``consumer`` is the API; ``group_membership`` the classic group protocol as a sans-IO state machine and
``consumer_coordinator`` its I/O and heartbeat thread; ``consumer_membership`` the consumer group protocol (KIP-848)
as a sans-IO state machine and ``membership_manager`` its I/O and heartbeat thread; ``consumer_protocol`` the Subscription and
Assignment bytes; ``assignors`` and ``sticky_assignors`` the partition assignors over the base in
``partition_assignor``, with Java's orders reproduced in ``java_collections``.
"""

from spark_kafkalog.client.consumer.assignors import RangeAssignor, RoundRobinAssignor, assignor_by_name
from spark_kafkalog.client.consumer.consumer import Consumer
from spark_kafkalog.client.consumer.consumer_membership import UnsupportedGroupProtocolError
from spark_kafkalog.client.consumer.consumer_protocol import Assignment, Subscription
from spark_kafkalog.client.consumer.group_membership import CommitFailedError, GroupMemberFatalError
from spark_kafkalog.client.consumer.partition_assignor import PartitionAssignor, RebalanceProtocol, UnknownAssignorError
from spark_kafkalog.client.consumer.sticky_assignors import CooperativeStickyAssignor, StickyAssignor

__all__ = [
    "Assignment",
    "CommitFailedError",
    "Consumer",
    "CooperativeStickyAssignor",
    "GroupMemberFatalError",
    "PartitionAssignor",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "StickyAssignor",
    "Subscription",
    "UnknownAssignorError",
    "UnsupportedGroupProtocolError",
    "assignor_by_name",
]
