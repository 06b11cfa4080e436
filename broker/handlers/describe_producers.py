"""DescribeProducers (key 61), v0: the producers of partitions this broker leads, from the log's producer
state (KIP-664: `kafka-transactions describe-producers` and `find-hanging`): id, epoch, last sequence and
timestamp, coordinator epoch of the latest marker, first offset of the ongoing transaction (-1 none).
Per partition UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER otherwise. Producer ids whose batches
all left the log stay listed until the log's next producer-state rebuild (Kafka expires them after
``producer.id.expiration.ms``).
Authorization (Kafka's ``handleDescribeProducersRequest``): an illegal topic name is INVALID_TOPIC_EXCEPTION;
then Read on the topic, else every partition asked answers TOPIC_AUTHORIZATION_FAILED, before the topic's
existence.
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.topic_name import topic_name_problem
from spark_kafkalog.security.acl import AclOperation, ResourceType

API_KEY = ApiKey.DESCRIBE_PRODUCERS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    Part = Resp.TopicResponse.PartitionResponse
    State = Part.ProducerState
    topics = []
    for t in request.topics:
        parts = []
        problem = topic_name_problem(t.name)
        if problem is not None:
            refusal = (ErrorCode.INVALID_TOPIC_EXCEPTION, problem)
        elif not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name):
            refusal = (ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")
        else:
            refusal = None
        for index in t.partition_indexes:
            if refusal is not None:
                code, message = refusal
                parts.append(Part(partition_index=index, error_code=code, error_message=message, active_producers=[]))
                continue
            part, code = ctx.services.replica_manager.leader_partition(t.name, index)
            if part is None:
                parts.append(Part(partition_index=index, error_code=code, error_message=None, active_producers=[]))
                continue
            producers = [
                State(
                    producer_id=e.producer_id,
                    producer_epoch=e.epoch,
                    last_sequence=e.last_seq,
                    last_timestamp=e.last_timestamp,
                    coordinator_epoch=e.coordinator_epoch,
                    current_txn_start_offset=e.current_txn_first_offset,
                )
                for e in part.log.active_producers()
            ]
            parts.append(
                Part(partition_index=index, error_code=ErrorCode.NONE, error_message=None, active_producers=producers)
            )
        topics.append(Resp.TopicResponse(name=t.name, partitions=parts))
    return Resp(throttle_time_ms=0, topics=topics)
