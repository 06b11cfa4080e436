"""The broker's authorizer: Kafka's AclAuthorizer semantics over an in-memory ACL cache.

CONTRACT STUB (issue 27): the signatures below are what handlers, the ACL APIs and the ACL sync call; the
decision logic is being written. Disabled (no ``authorizer.class.name``) it allows everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    ResourcePattern,
    ResourceType,
)

__all__ = ["AclAuthorizer"]


class AclAuthorizer:
    """Decides (principal, client host, operation, resource) from the cached ACLs. Thread-safe."""

    def __init__(
        self,
        *,
        enabled: bool = True,
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self.enabled = enabled
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    @classmethod
    def from_config(cls, config) -> AclAuthorizer:
        """From ``authorizer.class.name``, ``super.users``, ``allow.everyone.if.no.acl.found``."""
        return cls(enabled=False)

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        return True

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        return True

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType, name: str) -> int:
        return 0

    def acls(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        return []

    def replace_all(self, acls: Mapping[ResourcePattern, Iterable[AccessControlEntry]]) -> None:
        pass

    def update_resource(self, pattern: ResourcePattern, entries: Iterable[AccessControlEntry]) -> None:
        pass
