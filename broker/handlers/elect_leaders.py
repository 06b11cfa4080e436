"""ElectLeaders (key 43), v0-2 (KIP-183, KIP-460; `kafka-leader-election`): served by the controller, which
elects the leaders itself (``broker.cluster.controller_elections``). ``election_type`` (v1+; v0 is preferred):
0 preferred (the first assigned replica, when live and in the ISR), 1 unclean (for a partition without a live
leader: the first live in-sync replica, else the first live replica even outside the ISR, whatever
``unclean.leader.election.enable`` says); another value is INVALID_REQUEST. A null partition list elects every
partition and answers only those that needed an election (every topic listed, as Kafka 4.x). Per partition:
NONE (elected), ELECTION_NOT_NEEDED (the preferred replica leads already; unclean: the leader is live),
PREFERRED_LEADER_NOT_AVAILABLE (the preferred replica is not live or not in the ISR),
ELIGIBLE_LEADERS_NOT_AVAILABLE (unclean: no replica is live), UNKNOWN_TOPIC_OR_PARTITION,
INVALID_TOPIC_EXCEPTION (the topic is being deleted). The answer comes once the new states are written; the
brokers take over leadership from their watches moments later. From any other broker than the controller:
NOT_CONTROLLER for every partition named, as Kafka's ZooKeeper-mode brokers answer (they do not forward; admin
clients send ElectLeaders to the controller Metadata names and ask again after NOT_CONTROLLER), and also at the
top level (v1+), so that a client reading only the top-level error asks again too. Authorization: Alter on the
cluster, else CLUSTER_AUTHORIZATION_FAILED at the top level (v1+) and for every partition named (none when all
were asked for), as Kafka's ``handleElectLeaders``. Gaps: ``timeout_ms`` is not used.
"""

from __future__ import annotations

from broker.cluster.controller_elections import ElectionType
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.ELECT_LEADERS
VERSIONS = (0, 2)
_API = API_BY_KEY[API_KEY]


def _uniform(request, code: int, message: str | None):
    """Every named partition answered ``code`` (none when all were asked for), the top level too."""
    R = _API.Response
    results = [
        R.ReplicaElectionResult(
            topic=t.topic,
            partition_result=[
                R.ReplicaElectionResult.PartitionResult(partition_id=p, error_code=code, error_message=message)
                for p in t.partitions
            ],
        )
        for t in request.topic_partitions or ()
    ]
    return R(throttle_time_ms=0, error_code=code, replica_election_results=results)


async def handle(ctx, request):
    R = _API.Response
    if not ctx.authorize_cluster(AclOperation.ALTER):
        return _uniform(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, f"{ctx.principal} may not Alter the cluster")
    raw_type = request.election_type if ctx.version >= 1 else ElectionType.PREFERRED
    try:
        election_type = ElectionType(raw_type)
    except ValueError:
        return _uniform(request, ErrorCode.INVALID_REQUEST, f"Unknown election type {raw_type}")
    wanted = None
    if request.topic_partitions is not None:
        wanted = [(t.topic, p) for t in request.topic_partitions for p in t.partitions]
        if not wanted:
            return R(throttle_time_ms=0, error_code=ErrorCode.NONE, replica_election_results=[])
    controller = ctx.services.controller
    results = await controller.elect_leaders(election_type, wanted) if controller.is_active else None
    if results is None:
        return _uniform(request, ErrorCode.NOT_CONTROLLER, None)
    by_topic: dict[str, list] = {}
    if wanted is None:  # every topic, with the partitions that needed an election
        deleting = set(controller.deletions)
        by_topic = {name: [] for name in sorted(controller.topics) if name not in deleting}
        keys = list(results)
    else:
        keys = list(dict.fromkeys(wanted))
        for t in request.topic_partitions:
            by_topic.setdefault(t.topic, [])
    Part = R.ReplicaElectionResult.PartitionResult
    for topic, p in keys:
        code, message = results[(topic, p)]
        by_topic.setdefault(topic, []).append(Part(partition_id=p, error_code=code, error_message=message))
    return R(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        replica_election_results=[R.ReplicaElectionResult(topic=t, partition_result=ps) for t, ps in by_topic.items()],
    )
