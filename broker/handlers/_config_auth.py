"""Who may describe or alter which config resource (Kafka's ``ConfigHelper`` / ``KafkaApis`` rules): a
broker (type 4), broker-logger (type 8) or client metrics (type 16) resource needs the operation on the cluster, else
CLUSTER_AUTHORIZATION_FAILED; a topic (type 2) needs it on the topic, else TOPIC_AUTHORIZATION_FAILED; a group
(type 32) on the group, else GROUP_AUTHORIZATION_FAILED. Other types are not authorized here (the handlers refuse
them as INVALID_REQUEST)."""

from __future__ import annotations

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32


def config_authorization_error(ctx, operation: AclOperation, resource_type: int, name: str) -> ErrorCode | None:
    """The error answering a config resource ``(resource_type, name)`` the request's principal may not
    ``operation`` (DescribeConfigs or AlterConfigs); None when allowed or not a type checked here."""
    if resource_type in (BROKER, BROKER_LOGGER, CLIENT_METRICS):
        return None if ctx.authorize_cluster(operation) else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    if resource_type == TOPIC:
        allowed = ctx.authorize(operation, ResourceType.TOPIC, name)
        return None if allowed else ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if resource_type == GROUP:
        allowed = ctx.authorize(operation, ResourceType.GROUP, name)
        return None if allowed else ErrorCode.GROUP_AUTHORIZATION_FAILED
    return None
