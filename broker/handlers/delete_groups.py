"""DeleteGroups (key 42), v0-3: delete groups without members: tombstones for their committed offsets and
their group metadata are appended to ``__consumer_offsets`` (the cleaner removes the records later).
NON_EMPTY_GROUP while the group has members, GROUP_ID_NOT_FOUND for unknown groups, NOT_COORDINATOR for
groups coordinated elsewhere. Authorization: DELETE on each group, checked before the coordinator is asked
(else that group's GROUP_AUTHORIZATION_FAILED). v3 adds each result's ``error_message``: for a failed group
a sentence naming the cause (kafkalog's wording; Kafka's differs), null for a deleted one.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, group_authorized

API_KEY = ApiKey.DELETE_GROUPS
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]
_MESSAGES = {
    ErrorCode.GROUP_ID_NOT_FOUND: "Group {group_id} not found.",
    ErrorCode.NON_EMPTY_GROUP: "Group {group_id} is not empty: it still has members.",
    ErrorCode.NOT_COORDINATOR: "This broker is not the coordinator of group {group_id}.",
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: "The coordinator of group {group_id} is loading it.",
}


async def handle(ctx, request):
    Resp = _API.Response
    results = []
    for group_id in request.groups_names:
        if not group_authorized(ctx, AclOperation.DELETE, group_id):
            code = ErrorCode.GROUP_AUTHORIZATION_FAILED
            denied = f"Not authorized to delete group {group_id}"
            results.append(Resp.DeletableGroupResult(group_id=group_id, error_code=code, error_message=denied))
            continue
        message: str | None = None
        try:
            code = await coordinator(ctx).delete_group(group_id)
        except GroupError as e:
            code, message = e.error_code, str(e)
        if code != ErrorCode.NONE and message is None:
            message = _MESSAGES.get(code, code.name).format(group_id=group_id)
        results.append(Resp.DeletableGroupResult(group_id=group_id, error_code=code, error_message=message))
    return Resp(throttle_time_ms=0, results=results)
