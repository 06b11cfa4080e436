"""``AccessAdminMixin``: the ``AdminClient`` calls that say who may do what, and how much: SCRAM credentials
(``admin_scram``, KIP-554), client quotas (``admin_quotas``, KIP-546) and ACLs (``admin_acls``).

AlterUserScramCredentials goes to the controller (``AdminClient._controller_request``); the other calls go to
any broker (``_any_broker_send``). Failures of single items raise one ``AdminOperationError`` keyed by user,
``ClientQuotaEntity``, ``AclBinding`` or ``AclBindingFilter``. Thread-safe like ``KafkaClient``; mixed into
``AdminClient`` only (it needs its ``client``, ``_controller_request`` and ``_timeout``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from spark_kafkalog.client.admin import admin_acls, admin_quotas, admin_scram
from spark_kafkalog.client.admin.admin_errors import AdminOperationError
from spark_kafkalog.client.admin.admin_quotas import (
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilterComponent,
)
from spark_kafkalog.client.admin.admin_scram import (
    ScramCredentialInfo,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.security.acl import AclBinding, AclBindingFilter

__all__ = ["AccessAdminMixin"]


class AccessAdminMixin:
    """SCRAM credentials, client quotas and ACLs of ``AdminClient``."""

    client: KafkaClient
    _controller_request: Callable[..., tuple[int, Any, str]]
    _timeout: Callable[[int | None], int]

    # SCRAM credentials (spark_kafkalog.client.admin.admin_scram) -----------------------------------
    def describe_user_scram_credentials(
        self, users: Iterable[str] | None = None, *, missing_ok: bool = False
    ) -> dict[str, list[ScramCredentialInfo]]:
        """``{user: [ScramCredentialInfo(mechanism, iterations)]}`` of ``users`` (every user with credentials
        when None); a named user without credentials fails (``AdminOperationError``) unless ``missing_ok``."""
        found, errors = admin_scram.describe_user_scram_credentials(
            self._any_broker_send, None if users is None else list(users), missing_ok=missing_ok
        )
        if errors:
            raise AdminOperationError("DescribeUserScramCredentials", errors)
        return found

    def alter_user_scram_credentials(
        self,
        alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion],
        *,
        timeout_ms: int | None = None,
    ) -> None:
        """Upsert and delete SCRAM credentials (the controller writes them to ``/config/users/<user>``; every broker
        applies them without a restart). The salted passwords are computed here; failures raise
        ``AdminOperationError`` keyed by user."""
        alterations = list(alterations)
        if not alterations:
            return
        errors = admin_scram.alter_user_scram_credentials(
            self._controller_request, alterations, self._timeout(timeout_ms)
        )
        if errors:
            raise AdminOperationError("AlterUserScramCredentials", errors)

    # client quotas (spark_kafkalog.client.admin.admin_quotas) ---------------------------------------
    def describe_client_quotas(
        self, components: Iterable[ClientQuotaFilterComponent] = (), *, strict: bool = False
    ) -> dict[ClientQuotaEntity, dict[str, float]]:
        """``{entity: {quota key: value}}`` of the quota entities the filter selects (every entity with a quota
        when no component is given and not ``strict``); ``strict`` leaves out entities with types the filter
        does not name. Raises ``KafkaClientError`` with the broker's code (CLUSTER_AUTHORIZATION_FAILED without
        DescribeConfigs on the cluster, INVALID_REQUEST for a filter Kafka refuses)."""
        return admin_quotas.describe_client_quotas(self._any_broker_send, list(components), strict)

    def alter_client_quotas(self, alterations: Iterable[ClientQuotaAlteration], *, validate_only: bool = False) -> None:
        """Set or remove quota keys of user, client-id and user/client-id entities (written to ZooKeeper; every
        broker applies them within seconds); ``validate_only`` checks without writing. Failures raise
        ``AdminOperationError`` keyed by ``ClientQuotaEntity`` (CLUSTER_AUTHORIZATION_FAILED without
        AlterConfigs on the cluster, INVALID_REQUEST for an unknown key, a bad value or entity)."""
        alterations = list(alterations)
        if not alterations:
            return
        errors = admin_quotas.alter_client_quotas(self._any_broker_send, alterations, validate_only)
        if errors:
            raise AdminOperationError("AlterClientQuotas", errors)

    # ACLs (spark_kafkalog.client.admin.admin_acls) -------------------------------------------------
    def _any_broker_send(self, api_key: int, build: Any, *, min_version: int = 0, what: str) -> tuple[int, Any, None]:
        client = self.client

        def attempt() -> tuple[int, Any, None]:
            version, response = client.send_request(api_key, build, min_version=min_version)
            return version, response, None

        return client.call_with_retries(attempt, what=what)

    def create_acls(self, bindings: Iterable[AclBinding]) -> None:
        """Create ACLs (an existing one is created again without error); the broker writes them to ZooKeeper and
        every broker applies them within seconds. Raises ``AdminOperationError`` keyed by ``AclBinding`` whose
        ``errors`` carry the broker's code and message per binding (SECURITY_DISABLED without an authorizer,
        CLUSTER_AUTHORIZATION_FAILED without Alter on the cluster, INVALID_REQUEST for an empty name, a '/' in
        it, a cluster not named ``kafka-cluster``, or a binding holding ANY/MATCH/UNKNOWN)."""
        bindings = list(bindings)
        if not bindings:
            return
        errors = admin_acls.create_acls(self._any_broker_send, bindings)
        if errors:
            raise AdminOperationError("CreateAcls", errors)

    def describe_acls(self, acl_filter: AclBindingFilter | None = None) -> list[AclBinding]:
        """The ACLs matching ``acl_filter`` (every ACL by default), in the broker's order. Raises
        ``KafkaClientError`` with the broker's code: SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED (Describe on
        the cluster is needed), INVALID_REQUEST for a filter holding UNKNOWN."""
        return admin_acls.describe_acls(self._any_broker_send, acl_filter or AclBindingFilter())

    def delete_acls(self, filters: Iterable[AclBindingFilter]) -> list[AclBinding]:
        """Delete the ACLs matching any of ``filters`` (one DeleteAcls); returns those deleted. A filter or a
        matched ACL that failed raises ``AdminOperationError`` keyed by the ``AclBindingFilter`` (or the
        ``AclBinding``) after the others are deleted; ``admin_acls.delete_acls`` gives the per-filter results."""
        filters = list(filters)
        if not filters:
            return []
        return admin_acls.deleted_or_raise(admin_acls.delete_acls(self._any_broker_send, filters))
