"""CreatePartitions (key 37), v0-3: add partitions to existing topics (the count only grows), with
optional explicit assignments; validate_only checks without changing anything and answers exactly what a
real request would. The request is checked as a whole before anything is written (``broker.config_admin.topic_admin``):
more than ``max.partitions.per.request`` new partitions in total refuses every topic with
INVALID_PARTITIONS; a topic whose new partitions would put more than ``max.broker.partitions`` replicas on
a broker is refused with POLICY_VIOLATION; an assignment with several replicas per partition (or a topic
whose replication factor is above 1) is INVALID_REPLICATION_FACTOR, since replication is not implemented
yet. Waits up to ``timeout_ms`` for the new partitions' leaders (REQUEST_TIMED_OUT otherwise). A topic
named twice is INVALID_REQUEST.
Authorization: Alter on each topic, else TOPIC_AUTHORIZATION_FAILED "The topic authorization is failed."
(Kafka's message), checked after the named-twice check and before the topic's existence; refused topics are
left out of the request-size check.
"""

from __future__ import annotations

from collections import Counter

from broker.config_admin.topic_admin import TopicAdminError, TopicPlan
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

API_KEY = ApiKey.CREATE_PARTITIONS
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    b = ctx.services
    admin = b.topic_admin
    Resp = _API.Response
    counts = Counter(t.name for t in request.topics)
    results = []
    plans: list[TopicPlan | None] = []
    topics = b.metadata.topics
    alterable = {n for n in counts if ctx.authorize(AclOperation.ALTER, ResourceType.TOPIC, n)}
    too_many = admin.check_request_size(
        t.count - topics[t.name].num_partitions
        for t in request.topics
        if counts[t.name] == 1 and t.name in topics and t.name in alterable
    )
    for t in request.topics:
        res = Resp.CreatePartitionsTopicResult(name=t.name, error_code=ErrorCode.NONE, error_message=None)
        results.append(res)
        plans.append(None)
        if counts[t.name] > 1:
            res.error_code, res.error_message = ErrorCode.INVALID_REQUEST, f"topic {t.name!r} is named more than once"
            continue
        if t.name not in alterable:
            res.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            res.error_message = "The topic authorization is failed."
            continue
        if too_many is not None and t.name in topics:
            res.error_code, res.error_message = too_many.error_code, too_many.message
            continue
        assignments = None if t.assignments is None else [list(a.broker_ids) for a in t.assignments]
        try:
            plans[-1] = admin.plan_partitions(t.name, t.count, assignments)
        except TopicAdminError as e:
            res.error_code, res.error_message = e.error_code, e.message
    errors = await admin.apply(plans, validate_only=request.validate_only)
    pending = []
    for res, t, plan, error in zip(results, request.topics, plans, errors, strict=True):
        if plan is None:
            continue
        if error is not None:
            res.error_code, res.error_message = error.error_code, error.message
        elif not request.validate_only:
            pending.append((res, t.name, t.count))
    if pending and request.timeout_ms > 0:
        leaderless = await admin.without_leaders([(n, k) for _, n, k in pending], request.timeout_ms)
        for res, name, _ in pending:
            if name in leaderless:
                res.error_code = ErrorCode.REQUEST_TIMED_OUT
                res.error_message = f"new partitions of {name!r} got no leaders within {request.timeout_ms} ms"
    return Resp(throttle_time_ms=0, results=results)
