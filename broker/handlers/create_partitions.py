"""CreatePartitions (key 37), v0-3: add partitions to existing topics (the count only grows), with
optional explicit assignments; validate_only checks without changing anything. Waits up to
``timeout_ms`` for the new partitions' leaders (REQUEST_TIMED_OUT otherwise). A topic named twice is
INVALID_REQUEST.
"""

from __future__ import annotations

from collections import Counter

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from broker.topic_admin import TopicAdminError

API_KEY = ApiKey.CREATE_PARTITIONS
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    b = ctx.broker
    Resp = _API.Response
    counts = Counter(t.name for t in request.topics)
    results, pending = [], []
    for t in request.topics:
        res = Resp.CreatePartitionsTopicResult(name=t.name, error_code=ErrorCode.NONE, error_message=None)
        results.append(res)
        if counts[t.name] > 1:
            res.error_code, res.error_message = ErrorCode.INVALID_REQUEST, f"topic {t.name!r} is named more than once"
            continue
        assignments = None if t.assignments is None else [list(a.broker_ids) for a in t.assignments]
        try:
            await b.topic_admin.create_partitions(t.name, t.count, assignments, validate_only=request.validate_only)
        except TopicAdminError as e:
            res.error_code, res.error_message = e.error_code, e.message
            continue
        if not request.validate_only:
            pending.append((res, t.name, t.count))
    if pending and request.timeout_ms > 0:
        admin = b.topic_admin
        await admin.wait_for(lambda: all(admin.has_leaders(n, k) for _, n, k in pending), request.timeout_ms / 1000)
        for res, name, k in pending:
            if not admin.has_leaders(name, k):
                res.error_code = ErrorCode.REQUEST_TIMED_OUT
                res.error_message = f"new partitions of {name!r} got no leaders within {request.timeout_ms} ms"
    return Resp(throttle_time_ms=0, results=results)
