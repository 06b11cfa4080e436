"""``AIOAdminClient``'s partition, election, client-metrics, SCRAM, client-quota and ACL calls against an in-process
``EmbeddedBroker`` with an ACL authorizer (the PLAINTEXT principal ``User:ANONYMOUS`` a super user), mirroring the
blocking ``AdminClient``'s tests: each call's effect on the broker, its per-item failures raised as one
``AdminOperationError`` keyed by item, and results equal to what the blocking client answers for the same call."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import (
    AdminClient,
    AdminOperationError,
    AIOAdminClient,
    KafkaClientError,
    NewTopic,
    TopicPartition,
)
from spark_kafkalog.client.admin import ClientQuotaAlteration, ClientQuotaEntity, ClientQuotaFilterComponent, QuotaOp
from spark_kafkalog.client.admin.admin_configs import CLIENT_METRICS, SET, AlterConfigOp, ConfigResource
from spark_kafkalog.client.admin.admin_scram import (
    ScramCredentialInfo,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    authorizing: dict[str, Any] = {
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:ANONYMOUS",
    }
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:aio-admin-access-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b"),
        **authorizing,
    )
    b.start()
    yield b.bootstrap_servers
    b.stop()


def name(prefix: str = "aio-access") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def test_describe_topic_partitions_pages_and_matches_the_blocking_client(bootstrap):
    topic = name()
    with AdminClient(bootstrap) as blocking:
        blocking.create_topics([NewTopic(topic, 3, 1)])
        expected = blocking.describe_topic_partitions([topic])

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            paged = await admin.describe_topic_partitions([topic], partition_limit=1)
            whole = await admin.describe_topic_partitions([topic])
            with pytest.raises(AdminOperationError) as missing:
                await admin.describe_topic_partitions([topic, "no-such-topic"])
            return paged, whole, missing.value

    paged, whole, missing = asyncio.run(scenario())
    assert paged == whole == expected
    assert [p.partition for p in whole[topic].partitions] == [0, 1, 2]
    assert all(p.leader == 0 for p in whole[topic].partitions)
    assert set(missing.errors) == {"no-such-topic"}
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_elect_leaders_answers_per_partition_as_the_blocking_client(bootstrap):
    topic = name()
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    with AdminClient(bootstrap) as blocking:
        blocking.create_topics([NewTopic(topic, 2, 1)])
        expected = blocking.elect_leaders("preferred", tps)

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            got = await admin.elect_leaders("preferred", tps)
            with pytest.raises(ValueError, match="election type"):
                await admin.elect_leaders("sideways", tps)
            return got

    got = asyncio.run(scenario())
    assert set(got) == set(expected) == set(tps)
    for tp in tps:
        error = got[tp]
        assert error is not None and error.error_code == ErrorCode.ELECTION_NOT_NEEDED
        blocking_error = expected[tp]
        assert blocking_error is not None and blocking_error.error_code == error.error_code


def test_partition_reassignments_are_started_listed_and_refused_per_partition(bootstrap):
    topic = name()
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            await admin.create_topics([NewTopic(topic, 1, 1)])
            with pytest.raises(AdminOperationError) as refused:
                await admin.alter_partition_reassignments({tp: [0, 7]})
            await admin.alter_partition_reassignments({tp: [0]})
            deadline = time.monotonic() + 10
            while (ongoing := await admin.list_partition_reassignments([tp])) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return refused.value, ongoing, (await admin.describe_topics([topic]))[topic]

    refused, ongoing, description = asyncio.run(scenario())
    assert set(refused.errors) == {tp}
    assert refused.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert ongoing == {}
    assert description.partitions[0].replicas == (0,)
    with AdminClient(bootstrap) as blocking:
        assert blocking.list_partition_reassignments([tp]) == {}


def test_client_metrics_resources_are_listed_as_the_blocking_client(bootstrap):
    subscription = name("subs")

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            before = await admin.list_client_metrics_resources()
            await admin.incremental_alter_configs(
                {
                    ConfigResource(CLIENT_METRICS, subscription): [
                        AlterConfigOp("metrics", "org.apache.kafka.producer.", SET),
                        AlterConfigOp("interval.ms", "1000", SET),
                    ]
                }
            )
            return before, await admin.list_client_metrics_resources()

    before, after = asyncio.run(scenario())
    assert subscription not in before
    assert subscription in after and after == sorted(after)
    with AdminClient(bootstrap) as blocking:
        assert blocking.list_client_metrics_resources() == after


def test_scram_credentials_are_upserted_described_and_deleted(bootstrap):
    user, other = name("alice"), name("nobody")

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            await admin.alter_user_scram_credentials(
                [
                    UserScramCredentialUpsertion(user, "SCRAM-SHA-256", "s3cret", iterations=8192),
                    UserScramCredentialUpsertion(user, "SCRAM-SHA-512", "s3cret"),
                ]
            )
            described = await admin.describe_user_scram_credentials([user])
            with AdminClient(bootstrap) as blocking:
                blocking_view = blocking.describe_user_scram_credentials([user])
            with pytest.raises(AdminOperationError) as missing:
                await admin.describe_user_scram_credentials([user, other])
            tolerated = await admin.describe_user_scram_credentials([user, other], missing_ok=True)
            await admin.alter_user_scram_credentials([UserScramCredentialDeletion(user, "SCRAM-SHA-256")])
            after_delete = await admin.describe_user_scram_credentials([user])
            with pytest.raises(KafkaClientError, match="unknown SCRAM mechanism 'SCRAM-SHA-1'"):
                await admin.alter_user_scram_credentials([UserScramCredentialDeletion(user, "SCRAM-SHA-1")])
            with pytest.raises(AdminOperationError) as not_there:
                await admin.alter_user_scram_credentials([UserScramCredentialDeletion(other, "SCRAM-SHA-256")])
            return described, blocking_view, missing.value, tolerated, after_delete, not_there.value

    described, blocking_view, missing, tolerated, after_delete, not_there = asyncio.run(scenario())
    assert sorted(described[user], key=lambda c: c.mechanism) == [
        ScramCredentialInfo("SCRAM-SHA-256", 8192),
        ScramCredentialInfo("SCRAM-SHA-512", 4096),
    ]
    assert blocking_view == described
    assert set(missing.errors) == {other}
    assert missing.error_code == ErrorCode.RESOURCE_NOT_FOUND
    assert tolerated == described
    assert after_delete == {user: [ScramCredentialInfo("SCRAM-SHA-512", 4096)]}
    assert set(not_there.errors) == {other}
    assert not_there.error_code == ErrorCode.RESOURCE_NOT_FOUND


def test_client_quotas_are_altered_described_and_refused_per_entity(bootstrap):
    user = name("quota-user")
    entity = ClientQuotaEntity.of(user=user)
    bad = ClientQuotaEntity.of(client_id=name("bad"))
    only_user = [ClientQuotaFilterComponent.of_entity("user", user)]

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            await admin.alter_client_quotas([ClientQuotaAlteration(entity, (QuotaOp("producer_byte_rate", 4096),))])
            described = await admin.describe_client_quotas(only_user, strict=True)
            with pytest.raises(AdminOperationError) as refused:
                await admin.alter_client_quotas([ClientQuotaAlteration(bad, (QuotaOp("nonsense", 1),))])
            await admin.alter_client_quotas(
                [ClientQuotaAlteration(entity, (QuotaOp("consumer_byte_rate", 10),))], validate_only=True
            )
            validated = await admin.describe_client_quotas(only_user, strict=True)
            await admin.alter_client_quotas([ClientQuotaAlteration(entity, (QuotaOp("producer_byte_rate", None),))])
            return described, refused.value, validated, await admin.describe_client_quotas(only_user, strict=True)

    described, refused, validated, removed = asyncio.run(scenario())
    assert described == validated == {entity: {"producer_byte_rate": 4096.0}}
    assert set(refused.errors) == {bad}
    assert refused.error_code == ErrorCode.INVALID_REQUEST
    assert removed == {}
    with AdminClient(bootstrap) as blocking:
        assert blocking.describe_client_quotas(only_user, strict=True) == removed


def test_acls_are_created_described_and_deleted(bootstrap):
    topic = name("acl-topic")
    pattern = ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL)
    read = AclBinding(pattern, AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW))
    write = AclBinding(pattern, AccessControlEntry("User:bob", "*", AclOperation.WRITE, AclPermissionType.DENY))
    unknown = AclBinding(pattern, AccessControlEntry("User:carol", "*", AclOperation.ANY, AclPermissionType.ALLOW))
    on_topic = AclBindingFilter(ResourcePatternFilter(ResourceType.TOPIC, topic, PatternType.LITERAL))
    alices = AclBindingFilter(on_topic.pattern, AccessControlEntryFilter(principal="User:alice"))

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            await admin.create_acls([read, write])
            with pytest.raises(AdminOperationError) as refused:
                await admin.create_acls([unknown])
            described = await admin.describe_acls(on_topic)
            with AdminClient(bootstrap) as blocking:
                blocking_view = blocking.describe_acls(on_topic)
            deleted = await admin.delete_acls([alices])
            return refused.value, described, blocking_view, deleted, await admin.describe_acls(on_topic)

    refused, described, blocking_view, deleted, remaining = asyncio.run(scenario())
    assert set(refused.errors) == {unknown}
    assert refused.error_code == ErrorCode.INVALID_REQUEST
    assert set(described) == {read, write}
    assert blocking_view == described
    assert deleted == [read]
    assert remaining == [write]
