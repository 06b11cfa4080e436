"""Metadata (key 3), v0-13: live brokers (the endpoint of the listener the request came in on), cluster id,
controller, and topics with partition leaders, leader epochs, replicas, ISR and offline replicas.

Topic lists: v0 empty = all topics; v1+ null = all, empty = none; v10+ topics may be named by id.
A missing topic with a legal name is created, with ``num.partitions`` and ``default.replication.factor``,
when the request allows it (v4+ ``allow_auto_topic_creation``, always before v4) and
``auto.create.topics.enable`` is on, through the same checks as CreateTopics (the request's missing topics
together within ``max.partitions.per.request``, ``max.broker.partitions``); the answer then waits up to
``AUTO_CREATE_WAIT_S`` for its leaders and otherwise reports LEADER_NOT_AVAILABLE so the client asks again,
as Kafka does. Otherwise a missing topic is UNKNOWN_TOPIC_OR_PARTITION. An illegal name is answered
INVALID_TOPIC_EXCEPTION and never created, whatever the setting (as Kafka 3.x). A partition without a
live leader reports LEADER_NOT_AVAILABLE with leader -1.
Listeners: brokers without an endpoint for the listener the request came in on (by name) are left out; a
partition whose live leader lacks it answers LISTENER_NOT_FOUND from v6 (LEADER_NOT_AVAILABLE before), leader
-1, as Kafka's ``errorUnavailableListeners``.
Authorization (Kafka's ``handleTopicMetadataRequest``): each topic needs Describe on it. An all-topics
request silently leaves out the topics the principal may not describe; a named one it may not describe is
TOPIC_AUTHORIZATION_FAILED with no partitions and a zero topic id (by id: no name, its id), answered without
looking whether it exists, so nothing leaks. A describable missing topic that would be auto-created also
needs Create on the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED. Authorized-operations
bitfields: ``topic_authorized_operations`` (v8+, when ``include_topic_authorized_operations``) for every
topic answered other than those refused Describe or unknown ids; ``cluster_authorized_operations`` (v8-10,
when ``include_cluster_authorized_operations``) the cluster's, 0 without Describe on the cluster; otherwise
-2147483648 ("not requested").
v13's top-level ``error_code`` (KIP-1102) is always NONE: kafkalog, like Kafka 4.4's brokers, never asks a client
to bootstrap again (REBOOTSTRAP_REQUIRED).
"""

from __future__ import annotations

import uuid

from broker.config_admin.topic_admin import TopicAdminError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.topic_name import topic_name_problem
from spark_kafkalog.security.acl import CLUSTER_NAME, AclOperation, ResourceType

API_KEY = ApiKey.METADATA
VERSIONS = (0, 13)
_API = API_BY_KEY[API_KEY]
AUTO_CREATE_WAIT_S = 1.0
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
_LISTENER_NOT_FOUND_FROM = 6
NOT_REQUESTED = -2147483648  # Int.MIN_VALUE: the authorized-operations fields' "not requested"
_ZERO_ID = uuid.UUID(int=0)


async def handle(ctx, request):
    b = ctx.services
    cache = b.metadata
    v = ctx.version
    Resp = _API.Response
    brokers = [
        Resp.MetadataResponseBroker(node_id=bid, host=ep[0], port=ep[1], rack=info.rack)
        for bid, info in sorted(cache.brokers.items())
        if (ep := info.listener_endpoint(ctx.listener)) is not None
    ]
    all_topics = request.topics is None or (v == 0 and not request.topics)
    if all_topics:  # unauthorized topics are left out silently
        wanted = [
            (name, None)
            for name in sorted(cache.topics)
            if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name)
        ]
    else:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    allow_create = (
        (request.allow_auto_topic_creation if v >= 4 else True)
        and b.config["auto.create.topics.enable"]
        and not all_topics
    )

    errors: dict[str, ErrorCode] = {}
    denied: set[str] = set()  # refused Describe: answered 29 without looking whether they exist
    may_create_any = None  # Create on the cluster, asked at most once
    missing = []
    for name, _ in wanted:
        if name is None or name in errors or name in denied:
            continue
        if not all_topics and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
            denied.add(name)
            continue
        if name in cache.topics:
            continue
        if allow_create:
            if may_create_any is None:
                may_create_any = ctx.authorize_cluster(AclOperation.CREATE)
            if not may_create_any and not ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, name):
                errors[name] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
        if topic_name_problem(name) is not None:
            errors[name] = ErrorCode.INVALID_TOPIC_EXCEPTION
        elif allow_create and name not in missing:
            missing.append(name)
    created = await _auto_create(b.topic_admin, missing, errors) if missing else []
    if created:
        await b.topic_admin.wait_for(lambda: all(b.topic_admin.has_leaders(n) for n in created), AUTO_CREATE_WAIT_S)

    topic_ops = v >= 8 and request.include_topic_authorized_operations
    topics = []
    for name, topic_id in wanted:
        if name is None:
            name = cache.topic_by_id(topic_id) if topic_id not in (None, _ZERO_ID) else None
            if name is None:
                topics.append(
                    Resp.MetadataResponseTopic(
                        error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                        name=None,
                        topic_id=topic_id or _ZERO_ID,
                        partitions=[],
                    )
                )
                continue
            if name not in denied and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
                denied.add(name)
            if name in denied:  # topic ids are not secret: the id is answered, the name is not
                topics.append(
                    Resp.MetadataResponseTopic(
                        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=None, topic_id=topic_id, partitions=[]
                    )
                )
                continue
        if name in denied or errors.get(name) == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
            topics.append(
                Resp.MetadataResponseTopic(
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                    name=name,
                    topic_id=_ZERO_ID,
                    is_internal=name in INTERNAL_TOPICS and name not in denied,
                    partitions=[],
                )
            )
            continue
        answer = _topic(Resp, cache, name, errors.get(name), ctx.listener, v)
        if topic_ops:
            answer.topic_authorized_operations = ctx.authorized_operations(ResourceType.TOPIC, name)
        topics.append(answer)
    cluster_ops = NOT_REQUESTED
    if 8 <= v <= 10 and request.include_cluster_authorized_operations:
        cluster_ops = (
            ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME)
            if ctx.authorize_cluster(AclOperation.DESCRIBE)
            else 0
        )
    return Resp(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id=b.registry.cluster_id,
        controller_id=cache.controller_id if cache.controller_id is not None else -1,
        topics=topics,
        cluster_authorized_operations=cluster_ops,
    )


async def _auto_create(admin, names: list[str], errors: dict[str, ErrorCode]) -> list[str]:
    """Create the missing topics ``names`` with the broker defaults; returns those created, fills ``errors``."""
    too_many = admin.check_request_size(admin.requested_partitions(-1) for _ in names)
    if too_many is not None:
        errors.update((name, too_many.error_code) for name in names)
        return []
    plans = []
    for name in names:
        try:
            plans.append(admin.plan_topic(name))
        except TopicAdminError as e:
            plans.append(None)
            if e.error_code != ErrorCode.TOPIC_ALREADY_EXISTS:
                errors[name] = e.error_code
    created = []
    for name, plan, error in zip(names, plans, admin.admit(plans), strict=True):
        if plan is None:
            continue
        try:
            if error is not None:
                raise error
            await admin.write(plan)
            created.append(name)
        except TopicAdminError as e:
            if e.error_code != ErrorCode.TOPIC_ALREADY_EXISTS:
                errors[name] = e.error_code
    return created


def _topic(Resp, cache, name: str, error: ErrorCode | None, listener: str, version: int):
    t = cache.topics.get(name)
    if t is None:
        code = error if error is not None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return Resp.MetadataResponseTopic(error_code=code, name=name, topic_id=uuid.UUID(int=0), partitions=[])
    partitions = []
    for p in sorted(t.replicas):
        replicas = list(t.replicas[p])
        st = t.states.get(p)
        leader = st.leader if st is not None else -1
        code = ErrorCode.NONE if leader >= 0 and cache.alive(leader) else ErrorCode.LEADER_NOT_AVAILABLE
        if code == ErrorCode.NONE and cache.brokers[leader].listener_endpoint(listener) is None:
            # Kafka's errorUnavailableListeners: the leader lives but has no endpoint for this listener
            code = (
                ErrorCode.LISTENER_NOT_FOUND if version >= _LISTENER_NOT_FOUND_FROM else ErrorCode.LEADER_NOT_AVAILABLE
            )
        partitions.append(
            Resp.MetadataResponseTopic.MetadataResponsePartition(
                error_code=code,
                partition_index=p,
                leader_id=leader if code == ErrorCode.NONE else -1,
                leader_epoch=st.leader_epoch if st is not None else -1,
                replica_nodes=replicas,
                isr_nodes=list(st.isr) if st is not None else [],
                offline_replicas=[r for r in replicas if not cache.alive(r)],
            )
        )
    code = ErrorCode.NONE if t.states else ErrorCode.LEADER_NOT_AVAILABLE  # no partition has a state yet
    return Resp.MetadataResponseTopic(
        error_code=code,
        name=name,
        topic_id=t.topic_id,
        is_internal=name in INTERNAL_TOPICS,
        partitions=partitions,
    )
