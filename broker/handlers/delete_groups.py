"""DeleteGroups (key 42), v0-3: delete groups without members: tombstones for their committed offsets and
their group metadata are appended to ``__consumer_offsets`` (the cleaner removes the records later).
NON_EMPTY_GROUP while the group has members, GROUP_ID_NOT_FOUND for unknown groups, NOT_COORDINATOR for
groups coordinated elsewhere. Authorization: DELETE on each group, checked before the coordinator is asked
(else that group's GROUP_AUTHORIZATION_FAILED). v3's per-group ``error_message`` is null, as Kafka 4.4 answers these
errors (seen against the peers' broker; it fills it only for GROUP_DELETION_FAILED, which kafkalog never answers).
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, group_authorized

API_KEY = ApiKey.DELETE_GROUPS
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    results = []
    for group_id in request.groups_names:
        if not group_authorized(ctx, AclOperation.DELETE, group_id):
            results.append(
                Resp.DeletableGroupResult(group_id=group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
            )
            continue
        try:
            code = await coordinator(ctx).delete_group(group_id)
        except GroupError as e:
            code = e.error_code
        results.append(Resp.DeletableGroupResult(group_id=group_id, error_code=code))
    return Resp(throttle_time_ms=0, results=results)
