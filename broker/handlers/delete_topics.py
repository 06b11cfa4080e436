"""DeleteTopics (key 20), v0-6: mark topics for deletion; the controller removes them and every broker
deletes its logs when its watch sees the topic gone. The answer waits up to ``timeout_ms`` until this
broker's metadata no longer lists the topic (REQUEST_TIMED_OUT otherwise; the deletion still completes).
v6 may name topics by id (UNKNOWN_TOPIC_ID when no topic has it). TOPIC_DELETION_DISABLED when
``delete.topic.enable`` is false.

Authorization (Kafka's ``handleDeleteTopicsRequest``; after the TOPIC_DELETION_DISABLED check, which covers the
whole request): each topic needs Delete, else TOPIC_AUTHORIZATION_FAILED, checked before its existence (an
unknown topic is UNKNOWN_TOPIC_OR_PARTITION only to a principal allowed to delete it). A topic named by id
that the principal may not even Describe is answered without its name; the id itself is not secret.
"""

from __future__ import annotations

import uuid

from broker.config_admin.topic_admin import TopicAdminError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

API_KEY = ApiKey.DELETE_TOPICS
VERSIONS = (0, 6)
_API = API_BY_KEY[API_KEY]
_ZERO = uuid.UUID(int=0)


async def handle(ctx, request):
    b = ctx.services
    Resp = _API.Response
    if ctx.version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, _ZERO) for name in request.topic_names]
    enabled = b.config["delete.topic.enable"]
    results = []
    pending = []
    for name, topic_id in wanted:
        res = Resp.DeletableTopicResult(name=name, topic_id=topic_id, error_code=ErrorCode.NONE, error_message=None)
        results.append(res)
        if name is None:
            name = b.metadata.topic_by_id(topic_id)
            if name is None:
                res.error_code, res.error_message = ErrorCode.UNKNOWN_TOPIC_ID, f"no topic has id {topic_id}"
                continue
            if enabled and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
                res.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            res.name = name
        if enabled and not ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, name):
            res.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            continue
        if topic_id == _ZERO and name in b.metadata.topics:
            res.topic_id = b.metadata.topics[name].topic_id
        try:
            await b.topic_admin.delete_topic(name)
        except TopicAdminError as e:
            res.error_code, res.error_message = e.error_code, e.message
            continue
        pending.append((res, name))
    if pending and request.timeout_ms > 0:
        cache = b.metadata
        await b.topic_admin.wait_for(lambda: all(n not in cache.topics for _, n in pending), request.timeout_ms / 1000)
        for res, name in pending:
            if name in cache.topics:
                res.error_code = ErrorCode.REQUEST_TIMED_OUT
                res.error_message = f"deletion of {name!r} did not complete within {request.timeout_ms} ms"
    return Resp(throttle_time_ms=0, responses=results)
