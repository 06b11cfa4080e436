"""ACLs stored in ZooKeeper reach every broker process of an EmbeddedCluster: an ACL written through the
registry (the code CreateAcls and DeleteAcls run on the broker that serves them) is enforced by both brokers
within seconds, and its removal too."""

from __future__ import annotations

import uuid

import pytest

from broker.cluster.zk_registry import ZooKeeperRegistry
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic
from spark_kafkalog.client.metadata import metadata_request
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

METADATA = 3
HIDDEN = ResourcePattern(ResourceType.TOPIC, "hid", PatternType.PREFIXED)
DENY_DESCRIBE = AccessControlEntry("User:*", "*", AclOperation.DESCRIBE, AclPermissionType.DENY)


def topics_seen_by(admin: AdminClient, broker_id: int) -> set[str]:
    """The topics one broker lists to this client (an all-topics Metadata request sent to that broker)."""
    _, response = admin.client.send_request(
        METADATA, lambda version: metadata_request(version, None, False), node_id=broker_id
    )
    return {t.name for t in response.topics if not t.error_code and not t.is_internal}


def lists(admin: AdminClient, broker_id: int, expected: set[str]):
    return lambda: topics_seen_by(admin, broker_id) == expected


def test_an_acl_written_on_one_broker_is_enforced_by_the_other(zookeeper, tmp_path):
    connect = f"{zookeeper.connect_string}/acl-propagation-{uuid.uuid4().hex[:8]}"
    config = {
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found": "true",  # PLAINTEXT clients (User:ANONYMOUS) may do what no ACL names
    }
    with EmbeddedCluster(2, data_dir=tmp_path, zookeeper_connect=connect, broker_config=config) as cluster:
        with AdminClient(cluster.bootstrap_servers) as admin:
            admin.create_topics([NewTopic("open", 1, 2), NewTopic("hidden", 1, 2)])
            for b in cluster.broker_ids:
                wait_until(lists(admin, b, {"open", "hidden"}), 20, f"broker {b} listing both")

            registry = ZooKeeperRegistry(connect)
            registry.start()
            try:
                registry.update_resource_acls(HIDDEN, lambda current: current | {DENY_DESCRIBE})
                for b in cluster.broker_ids:
                    wait_until(lists(admin, b, {"open"}), 10, f"broker {b} hiding 'hidden'")
                registry.update_resource_acls(HIDDEN, lambda current: current - {DENY_DESCRIBE})
                for b in cluster.broker_ids:
                    wait_until(lists(admin, b, {"open", "hidden"}), 10, f"broker {b} listing it again")
            finally:
                registry.close()
