"""``AIOAccessAdminMixin``: the blocking ``AdminClient``'s partition, election, client-metrics, SCRAM, client-quota
and ACL calls as coroutines, for ``AIOAdminClient``.

Same names, arguments, results and errors as ``AdminClient`` (and its ``AccessAdminMixin``): each call runs the
blocking modules' request steps (``admin_topics``, ``admin_reassignments``, ``admin_elections``,
``admin_configs``, ``admin_scram``, ``admin_quotas``, ``admin_acls``) with ``drive_async``. Routing as there:
AlterPartitionReassignments, ListPartitionReassignments, ElectLeaders and AlterUserScramCredentials go to the
controller (``AIOAdminClient._controller_request``); DescribeTopicPartitions, ListClientMetricsResources,
DescribeUserScramCredentials, the client quota and ACL requests to any broker (``_any_broker_send``).
Concurrency: coroutines of the admin's event loop; mixed into ``AIOAdminClient`` only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from spark_kafkalog.client.admin import (
    admin_acls,
    admin_configs,
    admin_elections,
    admin_quotas,
    admin_reassignments,
    admin_scram,
    admin_topics,
)
from spark_kafkalog.client.admin.admin_errors import AdminOperationError
from spark_kafkalog.client.admin.admin_quotas import (
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilterComponent,
)
from spark_kafkalog.client.admin.admin_reassignments import PartitionReassignment
from spark_kafkalog.client.admin.admin_scram import (
    ScramCredentialInfo,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import TopicDescription, TopicPartition
from spark_kafkalog.security.acl import AclBinding, AclBindingFilter

from .admin_steps import drive_async
from .client import AsyncKafkaClient

__all__ = ["AIOAccessAdminMixin"]


def _raise_if(what: str, errors: Mapping[Any, KafkaClientError]) -> None:
    if errors:
        raise AdminOperationError(what, dict(errors))


class AIOAccessAdminMixin:
    """Partitions, elections, client metrics, SCRAM credentials, client quotas and ACLs of ``AIOAdminClient``."""

    client: AsyncKafkaClient
    _controller_request: Callable[..., Awaitable[tuple[int, Any, str]]]
    _timeout: Callable[[int | None], int]

    async def _any_broker_send(
        self, api_key: int, build: Any, *, min_version: int = 0, what: str
    ) -> tuple[int, Any, None]:
        """Send ``build(version)`` to any broker, retrying as ``call_with_retries``; peer is None."""
        client = self.client

        async def attempt() -> tuple[int, Any, None]:
            version, response = await client.send_request_versioned(None, api_key, build, min_version=min_version)
            return version, response, None

        return await client.call_with_retries(attempt, what=what)

    # topics, reassignments, elections, client metrics --------------------------------------------
    async def describe_topic_partitions(
        self, names: Iterable[str] | None = None, *, partition_limit: int = 2000
    ) -> dict[str, TopicDescription]:
        """As ``AdminClient.describe_topic_partitions`` (DescribeTopicPartitions pages from any broker)."""
        steps = admin_topics.describe_topic_partitions_steps(None if names is None else list(names), partition_limit)
        out, errors = await drive_async(steps, self._any_broker_send)
        _raise_if("DescribeTopicPartitions", errors)
        return out

    async def alter_partition_reassignments(
        self, reassignments: Mapping[TopicPartition, Iterable[int] | None], *, timeout_ms: int | None = None
    ) -> None:
        """As ``AdminClient.alter_partition_reassignments`` (start, or with None cancel, reassignments)."""
        if not reassignments:
            return
        targets = {TopicPartition(*tp): None if r is None else list(r) for tp, r in reassignments.items()}
        steps = admin_reassignments.alter_partition_reassignments_steps(targets, self._timeout(timeout_ms))
        _raise_if("AlterPartitionReassignments", await drive_async(steps, self._controller_request))

    async def list_partition_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None, *, timeout_ms: int | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        """As ``AdminClient.list_partition_reassignments`` (the ongoing ones; all when None)."""
        steps = admin_reassignments.list_partition_reassignments_steps(
            None if partitions is None else list(partitions), self._timeout(timeout_ms)
        )
        return await drive_async(steps, self._controller_request)

    async def elect_leaders(
        self,
        election_type: str = "preferred",
        partitions: Iterable[TopicPartition] | None = None,
        *,
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, KafkaClientError | None]:
        """As ``AdminClient.elect_leaders``: each partition answered -> None (elected) or its error."""
        steps = admin_elections.elect_leaders_steps(
            election_type, None if partitions is None else list(partitions), self._timeout(timeout_ms)
        )
        return await drive_async(steps, self._controller_request)

    async def list_client_metrics_resources(self) -> list[str]:
        """As ``AdminClient.list_client_metrics_resources`` (KIP-714 subscriptions, sorted)."""
        return await drive_async(admin_configs.list_client_metrics_resources_steps(), self._any_broker_send)

    # SCRAM credentials ------------------------------------------------------------------------------
    async def describe_user_scram_credentials(
        self, users: Iterable[str] | None = None, *, missing_ok: bool = False
    ) -> dict[str, list[ScramCredentialInfo]]:
        """As ``AdminClient.describe_user_scram_credentials``."""
        steps = admin_scram.describe_user_scram_credentials_steps(
            None if users is None else list(users), missing_ok=missing_ok
        )
        found, errors = await drive_async(steps, self._any_broker_send)
        _raise_if("DescribeUserScramCredentials", errors)
        return found

    async def alter_user_scram_credentials(
        self,
        alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion],
        *,
        timeout_ms: int | None = None,
    ) -> None:
        """As ``AdminClient.alter_user_scram_credentials`` (salted here; sent to the controller)."""
        alterations = list(alterations)
        if not alterations:
            return
        steps = admin_scram.alter_user_scram_credentials_steps(alterations, self._timeout(timeout_ms))
        _raise_if("AlterUserScramCredentials", await drive_async(steps, self._controller_request))

    # client quotas ----------------------------------------------------------------------------------
    async def describe_client_quotas(
        self, components: Iterable[ClientQuotaFilterComponent] = (), *, strict: bool = False
    ) -> dict[ClientQuotaEntity, dict[str, float]]:
        """As ``AdminClient.describe_client_quotas``."""
        steps = admin_quotas.describe_client_quotas_steps(list(components), strict)
        return await drive_async(steps, self._any_broker_send)

    async def alter_client_quotas(
        self, alterations: Iterable[ClientQuotaAlteration], *, validate_only: bool = False
    ) -> None:
        """As ``AdminClient.alter_client_quotas``."""
        alterations = list(alterations)
        if not alterations:
            return
        steps = admin_quotas.alter_client_quotas_steps(alterations, validate_only)
        _raise_if("AlterClientQuotas", await drive_async(steps, self._any_broker_send))

    # ACLs -------------------------------------------------------------------------------------------
    async def create_acls(self, bindings: Iterable[AclBinding]) -> None:
        """As ``AdminClient.create_acls``."""
        bindings = list(bindings)
        if not bindings:
            return
        _raise_if("CreateAcls", await drive_async(admin_acls.create_acls_steps(bindings), self._any_broker_send))

    async def describe_acls(self, acl_filter: AclBindingFilter | None = None) -> list[AclBinding]:
        """As ``AdminClient.describe_acls`` (every ACL by default)."""
        steps = admin_acls.describe_acls_steps(acl_filter or AclBindingFilter())
        return await drive_async(steps, self._any_broker_send)

    async def delete_acls(self, filters: Iterable[AclBindingFilter]) -> list[AclBinding]:
        """As ``AdminClient.delete_acls``: the ACLs deleted; failures raise ``AdminOperationError``."""
        filters = list(filters)
        if not filters:
            return []
        results = await drive_async(admin_acls.delete_acls_steps(filters), self._any_broker_send)
        return admin_acls.deleted_or_raise(results)
