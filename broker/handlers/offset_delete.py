"""OffsetDelete (key 47), v0: delete a group's committed offsets of some partitions (tombstones in
``__consumer_offsets``). GROUP_SUBSCRIBED_TO_TOPIC for topics the group's consumer-protocol members
subscribe to; GROUP_ID_NOT_FOUND for unknown groups; NOT_COORDINATOR for groups coordinated elsewhere.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ._groups import coordinator

API_KEY = ApiKey.OFFSET_DELETE
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    Topic = Resp.OffsetDeleteResponseTopic
    Part = Topic.OffsetDeleteResponsePartition
    tps = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    try:
        code, per_partition = await coordinator(ctx).delete_offsets(request.group_id, tps)
    except GroupError as e:
        code, per_partition = e.error_code, {}
    if code != ErrorCode.NONE:
        return Resp(error_code=code, throttle_time_ms=0, topics=[])
    return Resp(
        error_code=ErrorCode.NONE,
        throttle_time_ms=0,
        topics=[
            Topic(
                name=t.name,
                partitions=[
                    Part(partition_index=p.partition_index, error_code=per_partition[(t.name, p.partition_index)])
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )
