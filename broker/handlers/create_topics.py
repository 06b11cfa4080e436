"""CreateTopics (key 19), v0-7: create topics with partition counts and replication factors (-1: the
broker defaults, v4+), or explicit replica assignments, and topic configs validated against the log
configuration (INVALID_CONFIG names the key).

Every topic is validated and the request is checked as a whole before anything is written
(``broker.config_admin.topic_admin``): more than ``max.partitions.per.request`` new partitions in total refuses every
topic with INVALID_PARTITIONS; a topic that would put more than ``max.broker.partitions`` replicas on a
broker is refused with POLICY_VIOLATION; a replication factor above the number of live brokers is
INVALID_REPLICATION_FACTOR. ``validate_only``
answers exactly what a real request would, without writing.

Any broker accepts the request (Kafka routes it to the controller; here the registry transaction makes
every broker safe to create). The answer waits up to ``timeout_ms`` until this broker's metadata shows a
leader for every partition; when that does not happen in time the topic still exists and the answer is
REQUEST_TIMED_OUT, as Kafka's. ``timeout_ms`` <= 0 and ``validate_only`` answer at once. v5+ results
carry the partition count, replication factor and every config with its source; v7+ the topic id.

Authorization (Kafka's ``handleCreateTopicsRequest``): Create on the cluster, or else Create on each topic;
a topic without it is TOPIC_AUTHORIZATION_FAILED "Authorization failed." (after the named-twice check) and is
left out of the request-size check. The partition count, replication factor, configs and topic id are
answered only with DescribeConfigs on the topic; without it they stay -1 / empty / zero and
``topic_config_error_code`` (v5+) is TOPIC_AUTHORIZATION_FAILED, except for topics whose creation failed.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from broker.config_admin.describe import describe_topic_configs
from broker.config_admin.topic_admin import TopicAdminError, TopicPlan
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

API_KEY = ApiKey.CREATE_TOPICS
VERSIONS = (0, 7)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    b = ctx.services
    admin = b.topic_admin
    Resp = _API.Response
    Result = Resp.CreatableTopicResult
    counts = Counter(t.name for t in request.topics)
    may_create_any = ctx.authorize_cluster(AclOperation.CREATE)
    creatable = {n for n in counts if may_create_any or ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, n)}
    describable = {n for n in counts if ctx.authorize(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, n)}
    results = []
    plans: list[TopicPlan | None] = []
    too_many = admin.check_request_size(
        admin.requested_partitions(t.num_partitions, t.assignments)
        for t in request.topics
        if counts[t.name] == 1 and t.name in creatable
    )
    for t in request.topics:
        res = Result(
            name=t.name,
            topic_id=uuid.UUID(int=0),
            error_code=ErrorCode.NONE,
            error_message=None,
            num_partitions=-1,
            replication_factor=-1,
            configs=[],  # a refused topic lists no configs (an empty array, not null: Kafka's answer)
        )
        results.append(res)
        plans.append(None)
        if t.name not in describable:
            res.topic_config_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        if counts[t.name] > 1:
            res.error_code, res.error_message = ErrorCode.INVALID_REQUEST, f"topic {t.name!r} is named more than once"
            continue
        if t.name not in creatable:
            res.error_code, res.error_message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed."
            continue
        if too_many is not None:
            res.error_code, res.error_message = too_many.error_code, too_many.message
            res.topic_config_error_code = ErrorCode.NONE
            continue
        config = {c.name: c.value for c in t.configs}
        assignments = {a.partition_index: list(a.broker_ids) for a in t.assignments}
        try:
            plans[-1] = admin.plan_topic(t.name, t.num_partitions, t.replication_factor, config, assignments or None)
        except TopicAdminError as e:
            res.error_code, res.error_message = e.error_code, e.message
            res.topic_config_error_code = ErrorCode.NONE
    errors = await admin.apply(plans, validate_only=request.validate_only)
    created: list[tuple[Any, str, int]] = []
    for res, plan, error in zip(results, plans, errors, strict=True):
        if plan is None:
            continue
        if error is not None:
            res.error_code, res.error_message = error.error_code, error.message
            res.topic_config_error_code = ErrorCode.NONE
            continue
        if not request.validate_only:
            created.append((res, plan.name, plan.new_partitions))
        if plan.name not in describable:
            continue
        res.topic_id = plan.topic_id
        res.num_partitions = plan.new_partitions
        res.replication_factor = plan.replication_factor
        if ctx.version >= 5:
            res.configs = [
                Result.CreatableTopicConfigs(
                    name=d.name, value=d.value, read_only=False, config_source=d.source, is_sensitive=False
                )
                for d in describe_topic_configs(b, plan.overrides)
            ]
    if created and request.timeout_ms > 0:
        leaderless = await admin.without_leaders([(n, k) for _, n, k in created], request.timeout_ms)
        for res, name, _ in created:
            if name in leaderless:
                res.error_code = ErrorCode.REQUEST_TIMED_OUT
                res.error_message = (
                    f"topic {name!r} was created but its leaders were not elected within {request.timeout_ms} ms"
                )
    return Resp(throttle_time_ms=0, topics=results)
