"""DescribeLogDirs (key 35), v0-5: every log dir of this broker (``log.dirs``) with the partitions it holds
(KIP-113; `kafka-log-dirs --describe`, and `kafka-reassign-partitions` reads it before reassigning).
Per partition: size (sum of its segments' bytes), offset lag as Kafka computes it for a current log
(``max(high watermark - log end offset, 0)``, so 0), ``is_future_key`` false. A null topic list means
every partition; requested topics or partitions not hosted here are left out, as Kafka does. v4 adds the
volume's total and usable bytes (``statvfs`` of the dir), v5 ``is_cordoned`` (KIP-1066), always false:
kafkalog has no cordoned dirs. Dir errors are always NONE: kafkalog has no
offline log dirs. Authorization: Describe on the cluster, else no results and (v3+, which has the field)
the top-level error CLUSTER_AUTHORIZATION_FAILED, as Kafka answers. Gaps: no future replicas
(AlterReplicaLogDirs is not served).
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

from broker.log.log_manager import LogManager
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.DESCRIBE_LOG_DIRS
VERSIONS = (0, 5)
_API = API_BY_KEY[API_KEY]


def _describe(logs: LogManager, wanted: dict[str, set[int]] | None) -> list:
    Result = _API.Response.DescribeLogDirsResult
    Topic = Result.DescribeLogDirsTopic
    Part = Topic.DescribeLogDirsPartition
    by_dir: dict[Path, dict[str, list]] = {d: defaultdict(list) for d in logs.log_dirs}
    for plog in logs.all_logs():
        topic, index = plog.topic, plog.partition
        if wanted is not None and index not in wanted.get(topic, ()):
            continue
        log_dir = logs.log_dir_of(topic, index)
        if log_dir is None:  # deleted meanwhile
            continue
        lag = max(plog.high_watermark - plog.log_end_offset, 0)
        by_dir[log_dir][topic].append(
            Part(partition_index=index, partition_size=plog.size_in_bytes, offset_lag=lag, is_future_key=False)
        )
    results = []
    for log_dir, topics in by_dir.items():
        st = os.statvfs(log_dir)
        results.append(
            Result(
                error_code=ErrorCode.NONE,
                log_dir=str(log_dir),
                topics=[
                    Topic(name=name, partitions=sorted(parts, key=lambda p: p.partition_index))
                    for name, parts in sorted(topics.items())
                ],
                total_bytes=st.f_blocks * st.f_frsize,
                usable_bytes=st.f_bavail * st.f_frsize,
            )
        )
    return results


async def handle(ctx, request):
    b = ctx.services
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        return _API.Response(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results=[])
    wanted = None if request.topics is None else {t.topic: set(t.partitions) for t in request.topics}
    results = await b.run_blocking(_describe, b.replica_manager.log_manager, wanted)
    return _API.Response(throttle_time_ms=0, error_code=ErrorCode.NONE, results=results)
