"""Handler calls as ``User:bob`` against the services of an unstarted broker whose ``AclAuthorizer`` is enabled
and holds the ACLs a test grants (``Secured``): the authorization tests of the data and admin APIs call each
handler once without the ACL Kafka requires and once with it.

Broker 0 is live (one PLAINTEXT endpoint) and leads every partition of the topics ``Secured.topic`` adds
(metadata cache, replica manager and the in-process registry all know them)."""

from __future__ import annotations

import asyncio
from typing import Any

from broker.cluster.registry import BrokerInfo, PartitionState, TopicAssignment
from broker.security.authorizer import AclAuthorizer
from spark_kafkalog.protocol import API_BY_KEY
from spark_kafkalog.security.acl import (
    CLUSTER_NAME,
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)

from ..services_builder import build_services, request_context

BOB = "User:bob"
Op, Rt = AclOperation, ResourceType
NOT_REQUESTED = -2147483648


class Secured:
    """An enabled authorizer (no super users, ``allow.everyone.if.no.acl.found`` off; or the one given) in built
    services."""

    def __init__(self, tmp_path, registry, authorizer: AclAuthorizer | None = None, **parts: Any) -> None:
        self.authorizer = authorizer if authorizer is not None else AclAuthorizer(enabled=True)
        self.registry = registry
        self.services = build_services(tmp_path, authorizer=self.authorizer, registry=registry, **parts)
        self.services.metadata.set_brokers({0: BrokerInfo(0, "127.0.0.1", 9092)})
        self._acls: dict[ResourcePattern, set[AccessControlEntry]] = {}

    def topic(self, name: str, partitions: int = 1, replicas: tuple[int, ...] = (0,)) -> None:
        """Create ``name`` led here: in the registry, the metadata cache and the replica manager."""
        assignment = TopicAssignment(name, {p: replicas for p in range(partitions)})
        self.registry.create_topic(assignment, {})
        states = {p: PartitionState(0, 0, (0,), 1) for p in range(partitions)}
        self.services.metadata.set_topic(assignment, states, {})
        self.services.replica_manager.apply_topic(
            name, dict(assignment.partitions), states, self.services.log_config_for({})
        )

    def grant(
        self,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str = CLUSTER_NAME,
        *,
        principal: str = BOB,
        permission: AclPermissionType = AclPermissionType.ALLOW,
    ) -> None:
        """Add an ACL (literal resource, any host) and hand the authorizer the whole set."""
        pattern = ResourcePattern(resource_type, name, PatternType.LITERAL)
        self._acls.setdefault(pattern, set()).add(AccessControlEntry(principal, "*", operation, permission))
        self.authorizer.replace_all({p: frozenset(e) for p, e in self._acls.items()})

    def call(self, module, version: int, principal: str = BOB, **fields: Any) -> Any:
        """``module.handle`` of a request built from ``fields`` at ``version``, sent by ``principal``."""
        return self.send(module, version, API_BY_KEY[module.API_KEY].Request(**fields), principal)

    def send(self, module, version: int, body: Any, principal: str = BOB) -> Any:
        """``module.handle`` of the request ``body`` at ``version``, sent by ``principal``."""
        ctx = request_context(self.services, module.API_KEY, version, principal=principal)
        return asyncio.run(module.handle(ctx, body))
