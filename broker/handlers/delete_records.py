"""DeleteRecords (key 21), v0-2: advance the log start offset of partitions this broker leads.

``offset`` -1 means the high watermark; an offset above the high watermark or below zero is
OFFSET_OUT_OF_RANGE. The answer's ``low_watermark`` is the new log start offset (segments wholly below it
are deleted by the log; reads below it become OFFSET_OUT_OF_RANGE at once).
Authorization: Delete on each topic, else its partitions answer TOPIC_AUTHORIZATION_FAILED (low watermark
-1), checked before the topic's existence.
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

API_KEY = ApiKey.DELETE_RECORDS
VERSIONS = (0, 2)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    b = ctx.services
    Resp = _API.Response
    Part = Resp.DeleteRecordsTopicResult.DeleteRecordsPartitionResult
    deletable = {t.name for t in request.topics if ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, t.name)}
    topics = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            res = Part(partition_index=p.partition_index, low_watermark=-1, error_code=ErrorCode.NONE)
            parts.append(res)
            if t.name not in deletable:
                res.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            part, code = b.replica_manager.leader_partition(t.name, p.partition_index)
            if part is None:
                res.error_code = code
                continue
            hw = part.high_watermark
            offset = hw if p.offset == -1 else p.offset
            if offset < 0 or offset > hw:
                res.error_code = ErrorCode.OFFSET_OUT_OF_RANGE
                continue
            res.low_watermark = part.log.delete_records_before(offset)
        topics.append(Resp.DeleteRecordsTopicResult(name=t.name, partitions=parts))
    return Resp(throttle_time_ms=0, topics=topics)
