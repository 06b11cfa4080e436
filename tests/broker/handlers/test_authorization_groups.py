"""The group and transaction handlers enforce Kafka's per-API authorization (KafkaApis 3.9), called directly
with the services of an unstarted broker whose AclAuthorizer holds exactly the listed grants: without the ACL the
principal gets Kafka's error (per partition, per group or for the whole request, as Kafka answers); with it the
request gets past the check (to the coordinator, which coordinates nothing here and answers
COORDINATOR_NOT_AVAILABLE, or has a loaded partition where the answer needs one)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from broker.cluster.registry import PartitionState, TopicAssignment
from broker.coordinator.group import Group, GroupState
from broker.coordinator.offset_store import CommittedOffset
from broker.coordinator.txn_metadata import TxnMetadata, TxnState
from broker.handlers import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    delete_groups,
    describe_groups,
    describe_transactions,
    end_txn,
    find_coordinator,
    heartbeat,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_transactions,
    offset_commit,
    offset_delete,
    offset_fetch,
    sync_group,
    txn_offset_commit,
)
from broker.security.authorizer import AclAuthorizer
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
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

Op, RT, E = AclOperation, ResourceType, ErrorCode
BOB = "User:bob"


@dataclass
class GrantAuthorizer:
    """Kafka's AclAuthorizer (``broker.security.authorizer``) holding exactly ALLOW ACLs for ``grants`` of
    (principal, operation, resource type, literal name), from any host; a test changes ``grants`` freely and each
    question is answered by an authorizer loaded with the grants of that moment."""

    grants: set[tuple[str, AclOperation, ResourceType, str]] = field(default_factory=set)
    enabled: bool = True

    def _current(self) -> AclAuthorizer:
        acls: dict[ResourcePattern, list[AccessControlEntry]] = {}
        for principal, operation, resource_type, name in self.grants:
            acls.setdefault(ResourcePattern(resource_type, name, PatternType.LITERAL), []).append(
                AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW)
            )
        authorizer = AclAuthorizer(enabled=True)
        authorizer.replace_all(acls)
        return authorizer

    def authorize(self, principal, host, operation, resource_type, name) -> bool:
        return self._current().authorize(principal, host, operation, resource_type, name)

    def authorize_by_resource_type(self, principal, host, operation, resource_type) -> bool:
        return self._current().authorize_by_resource_type(principal, host, operation, resource_type)

    def authorized_operations(self, principal, host, resource_type, name) -> int:
        return self._current().authorized_operations(principal, host, resource_type, name)


def grant(op: AclOperation, resource_type: ResourceType, name: str, principal: str = BOB):
    return (principal, op, resource_type, name)


@pytest.fixture
def authorizer():
    return GrantAuthorizer()


@pytest.fixture
def services(tmp_path, authorizer):
    s = build_services(tmp_path, authorizer=authorizer)
    s.metadata.set_topic(
        TopicAssignment("t", {0: (0,), 1: (0,)}), {p: PartitionState(0, 0, (0,), 1) for p in (0, 1)}, {}
    )
    return s


def call(services, module, version, **fields):
    body = API_BY_KEY[module.API_KEY].Request(**fields)
    ctx = request_context(services, module.API_KEY, version, principal=BOB)
    return asyncio.run(module.handle(ctx, body))


def coordinate(services, group_id: str) -> None:
    """Make the group coordinator load the ``__consumer_offsets`` partition of ``group_id``."""
    gc = services.group_coordinator
    gc.topic.loaded[gc.partition_of(group_id)] = 0


def part_codes(resp, topics_attr="topics", parts_attr="partitions", code_attr="error_code"):
    return {
        (t.name, p.partition_index): getattr(p, code_attr)
        for t in getattr(resp, topics_attr)
        for p in getattr(t, parts_attr)
    }


# -- FindCoordinator ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize(
    ("key_type", "resource_type", "denied"),
    [(0, RT.GROUP, E.GROUP_AUTHORIZATION_FAILED), (1, RT.TRANSACTIONAL_ID, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)],
)
def test_find_coordinator_needs_describe_on_the_key(services, authorizer, version, key_type, resource_type, denied):
    def ask(key):
        if version < 4:
            r = call(services, find_coordinator, version, key=key, key_type=key_type)
            return r.error_code, r.node_id
        r = call(services, find_coordinator, version, coordinator_keys=[key], key_type=key_type)
        return r.coordinators[0].error_code, r.coordinators[0].node_id

    assert ask("k") == (denied, -1)
    authorizer.grants.add(grant(Op.DESCRIBE, resource_type, "k"))
    code, _ = ask("k")
    assert code == E.COORDINATOR_NOT_AVAILABLE


def test_find_coordinator_v4_answers_each_key_on_its_own(services, authorizer):
    authorizer.grants.add(grant(Op.READ, RT.GROUP, "mine"))  # READ implies DESCRIBE
    r = call(services, find_coordinator, 4, coordinator_keys=["theirs", "mine"], key_type=0)
    codes = {c.key: c.error_code for c in r.coordinators}
    assert codes["theirs"] == E.GROUP_AUTHORIZATION_FAILED
    assert codes["mine"] != E.GROUP_AUTHORIZATION_FAILED


# -- JoinGroup, SyncGroup, Heartbeat, LeaveGroup ----------------------------------------------------------------
def _join(services, version=7):
    return call(
        services,
        join_group,
        version,
        group_id="g",
        session_timeout_ms=10000,
        rebalance_timeout_ms=10000,
        member_id="m-1",
        group_instance_id=None,
        protocol_type="consumer",
        protocols=[],
    )


def _sync(services):
    return call(
        services,
        sync_group,
        5,
        group_id="g",
        generation_id=1,
        member_id="m-1",
        group_instance_id=None,
        protocol_type="consumer",
        protocol_name="range",
        assignments=[],
    )


def _heartbeat(services):
    return call(services, heartbeat, 4, group_id="g", generation_id=1, member_id="m-1", group_instance_id=None)


def _leave(services):
    M = API_BY_KEY[leave_group.API_KEY].Request.MemberIdentity
    return call(services, leave_group, 4, group_id="g", members=[M(member_id="m-1", group_instance_id=None)])


@pytest.mark.parametrize("request_of", [_join, _sync, _heartbeat, _leave], ids=["join", "sync", "heartbeat", "leave"])
def test_membership_requests_need_read_on_the_group(services, authorizer, request_of):
    denied = request_of(services)
    assert denied.error_code == E.GROUP_AUTHORIZATION_FAILED
    authorizer.grants.add(grant(Op.DESCRIBE, RT.GROUP, "g"))  # Describe is not enough
    assert request_of(services).error_code == E.GROUP_AUTHORIZATION_FAILED
    authorizer.grants.add(grant(Op.READ, RT.GROUP, "g"))
    assert request_of(services).error_code == E.COORDINATOR_NOT_AVAILABLE


def test_join_group_denied_answers_kafkas_error_response(services):
    r = _join(services)
    assert (r.error_code, r.member_id, r.generation_id, r.leader, r.members) == (
        E.GROUP_AUTHORIZATION_FAILED,
        "",
        -1,
        "",
        [],
    )


def test_leave_group_denied_is_a_top_level_error_without_members(services):
    r = _leave(services)
    assert (r.error_code, r.members) == (E.GROUP_AUTHORIZATION_FAILED, [])


# -- OffsetCommit ----------------------------------------------------------------------------------------------
def _commit(services, version, topics):
    T = API_BY_KEY[offset_commit.API_KEY].Request.OffsetCommitRequestTopic
    P = T.OffsetCommitRequestPartition
    return call(
        services,
        offset_commit,
        version,
        group_id="g",
        generation_id_or_member_epoch=-1,
        member_id="",
        group_instance_id=None,
        retention_time_ms=-1,
        topics=[
            T(name=name, partitions=[P(partition_index=p, committed_offset=5, committed_metadata="") for p in ps])
            for name, ps in topics.items()
        ],
    )


@pytest.mark.parametrize("version", [0, 2, 8])
def test_offset_commit_without_read_on_the_group_fails_every_partition(services, authorizer, version):
    authorizer.grants.add(grant(Op.READ, RT.TOPIC, "t"))
    r = _commit(services, version, {"t": [0, 1], "nope": [0]})
    assert set(part_codes(r).values()) == {E.GROUP_AUTHORIZATION_FAILED}
    assert len(part_codes(r)) == 3


@pytest.mark.parametrize("version", [0, 2, 8])
def test_offset_commit_checks_read_on_each_topic_before_its_existence(services, authorizer, version):
    authorizer.grants.add(grant(Op.READ, RT.GROUP, "g"))
    authorizer.grants.add(grant(Op.DESCRIBE, RT.TOPIC, "t"))  # Describe does not let it commit
    authorizer.grants.add(grant(Op.READ, RT.TOPIC, "gone"))
    r = _commit(services, version, {"t": [0], "secret": [0], "gone": [0]})
    assert part_codes(r) == {
        ("t", 0): E.TOPIC_AUTHORIZATION_FAILED,
        ("secret", 0): E.TOPIC_AUTHORIZATION_FAILED,  # does not exist either: not told
        ("gone", 0): E.UNKNOWN_TOPIC_OR_PARTITION,
    }


def test_offset_commit_with_read_on_group_and_topic_reaches_the_coordinator(services, authorizer):
    authorizer.grants |= {grant(Op.READ, RT.GROUP, "g"), grant(Op.READ, RT.TOPIC, "t")}
    r = _commit(services, 8, {"t": [0, 1], "other": [0]})
    assert part_codes(r) == {
        ("t", 0): E.COORDINATOR_NOT_AVAILABLE,
        ("t", 1): E.COORDINATOR_NOT_AVAILABLE,
        ("other", 0): E.TOPIC_AUTHORIZATION_FAILED,
    }


# -- OffsetFetch -----------------------------------------------------------------------------------------------
def _fetch_topics(topics):
    T = API_BY_KEY[offset_fetch.API_KEY].Request.OffsetFetchRequestTopic
    return None if topics is None else [T(name=n, partition_indexes=ps) for n, ps in topics.items()]


def _committed(services, group_id="g"):
    coordinate(services, group_id)
    services.group_coordinator.store.offsets[group_id] = {
        ("t", 0): CommittedOffset(7),
        ("secret", 0): CommittedOffset(9),
    }


def test_offset_fetch_without_describe_on_the_group(services):
    _committed(services)
    v1 = call(services, offset_fetch, 1, group_id="g", topics=_fetch_topics({"t": [0]}))
    assert part_codes(v1) == {("t", 0): E.GROUP_AUTHORIZATION_FAILED}
    v5 = call(services, offset_fetch, 5, group_id="g", topics=_fetch_topics({"t": [0]}), require_stable=False)
    assert (v5.error_code, v5.topics) == (E.GROUP_AUTHORIZATION_FAILED, [])


def test_offset_fetch_answers_unauthorized_topics_29_with_offset_minus_one(services, authorizer):
    _committed(services)
    authorizer.grants |= {grant(Op.DESCRIBE, RT.GROUP, "g"), grant(Op.DESCRIBE, RT.TOPIC, "t")}
    r = call(services, offset_fetch, 5, group_id="g", topics=_fetch_topics({"t": [0], "secret": [0]}))
    got = {(t.name, p.partition_index): (p.error_code, p.committed_offset) for t in r.topics for p in t.partitions}
    assert r.error_code == E.NONE
    assert got == {("t", 0): (E.NONE, 7), ("secret", 0): (E.TOPIC_AUTHORIZATION_FAILED, -1)}


def test_offset_fetch_of_every_partition_silently_leaves_out_undescribable_topics(services, authorizer):
    _committed(services)
    authorizer.grants |= {grant(Op.DESCRIBE, RT.GROUP, "g"), grant(Op.READ, RT.TOPIC, "t")}
    r = call(services, offset_fetch, 5, group_id="g", topics=None)
    assert {(t.name, p.partition_index): p.committed_offset for t in r.topics for p in t.partitions} == {("t", 0): 7}


def test_offset_fetch_v8_checks_each_group(services, authorizer):
    _committed(services, "g")
    _committed(services, "h")
    authorizer.grants |= {grant(Op.DESCRIBE, RT.GROUP, "g"), grant(Op.DESCRIBE, RT.TOPIC, "t")}
    G = API_BY_KEY[offset_fetch.API_KEY].Request.OffsetFetchRequestGroup
    r = call(services, offset_fetch, 8, groups=[G(group_id="g", topics=None), G(group_id="h", topics=None)])
    by_group = {g.group_id: g for g in r.groups}
    assert (by_group["h"].error_code, by_group["h"].topics) == (E.GROUP_AUTHORIZATION_FAILED, [])
    g = by_group["g"]
    assert g.error_code == E.NONE
    assert [(t.name, [p.committed_offset for p in t.partitions]) for t in g.topics] == [("t", [7])]


# -- OffsetDelete, DeleteGroups ----------------------------------------------------------------------------------
def _offset_delete(services, topics):
    T = API_BY_KEY[offset_delete.API_KEY].Request.OffsetDeleteRequestTopic
    P = T.OffsetDeleteRequestPartition
    parts = [T(name=n, partitions=[P(partition_index=p) for p in ps]) for n, ps in topics.items()]
    return call(services, offset_delete, 0, group_id="g", topics=parts)


def test_offset_delete_needs_delete_on_the_group_then_read_on_each_topic(services, authorizer):
    authorizer.grants |= {grant(Op.READ, RT.GROUP, "g"), grant(Op.READ, RT.TOPIC, "t")}  # Read is not Delete
    r = _offset_delete(services, {"t": [0]})
    assert (r.error_code, r.topics) == (E.GROUP_AUTHORIZATION_FAILED, [])
    coordinate(services, "g")
    services.group_coordinator.store.offsets["g"] = {("secret", 0): CommittedOffset(1)}
    authorizer.grants |= {grant(Op.DELETE, RT.GROUP, "g"), grant(Op.READ, RT.TOPIC, "gone")}
    r = _offset_delete(services, {"secret": [0], "gone": [0]})
    assert r.error_code == E.NONE
    assert part_codes(r) == {("secret", 0): E.TOPIC_AUTHORIZATION_FAILED, ("gone", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert services.group_coordinator.store.offsets["g"] == {("secret", 0): CommittedOffset(1)}


def test_delete_groups_needs_delete_on_each_group(services, authorizer):
    authorizer.grants |= {grant(Op.DELETE, RT.GROUP, "mine"), grant(Op.READ, RT.GROUP, "read-only")}
    r = call(services, delete_groups, 2, groups_names=["mine", "read-only", "theirs"])
    codes = {g.group_id: g.error_code for g in r.results}
    assert codes == {
        "mine": E.COORDINATOR_NOT_AVAILABLE,
        "read-only": E.GROUP_AUTHORIZATION_FAILED,
        "theirs": E.GROUP_AUTHORIZATION_FAILED,
    }


# -- DescribeGroups, ListGroups ----------------------------------------------------------------------------------
def test_describe_groups_needs_describe_and_carries_the_authorized_operations(services, authorizer):
    for g in ("g", "h"):
        coordinate(services, g)
        services.group_coordinator.groups[g] = Group(g, state=GroupState.EMPTY)
    authorizer.grants |= {grant(Op.READ, RT.GROUP, "g")}
    r = call(services, describe_groups, 5, groups=["g", "h"], include_authorized_operations=True)
    g, h = r.groups
    assert (h.group_id, h.error_code, h.group_state, h.members) == ("h", E.GROUP_AUTHORIZATION_FAILED, "", [])
    assert h.authorized_operations == -(2**31)
    assert (g.error_code, g.group_state) == (E.NONE, "Empty")
    assert g.authorized_operations == (1 << Op.READ) | (1 << Op.DESCRIBE)
    not_asked = call(services, describe_groups, 5, groups=["g"], include_authorized_operations=False)
    assert not_asked.groups[0].authorized_operations == -(2**31)


def test_list_groups_shows_every_group_with_describe_on_the_cluster_else_only_describable_ones(services, authorizer):
    for g in ("a", "b", "c"):
        coordinate(services, g)
        services.group_coordinator.groups[g] = Group(g, state=GroupState.EMPTY)
    authorizer.grants |= {grant(Op.DESCRIBE, RT.GROUP, "a"), grant(Op.DELETE, RT.GROUP, "c")}
    r = call(services, list_groups, 4, states_filter=[])
    assert (r.error_code, sorted(g.group_id for g in r.groups)) == (E.NONE, ["a", "c"])
    authorizer.grants.add(grant(Op.DESCRIBE, RT.CLUSTER, CLUSTER_NAME))
    r = call(services, list_groups, 4, states_filter=[])
    assert sorted(g.group_id for g in r.groups) == ["a", "b", "c"]


# -- InitProducerId ----------------------------------------------------------------------------------------------
def _init(services, transactional_id):
    return call(
        services,
        init_producer_id,
        4,
        transactional_id=transactional_id,
        transaction_timeout_ms=60000,
        producer_id=-1,
        producer_epoch=-1,
    )


def test_transactional_init_producer_id_needs_write_on_the_transactional_id(services, authorizer):
    authorizer.grants.add(grant(Op.DESCRIBE, RT.TRANSACTIONAL_ID, "tx"))
    r = _init(services, "tx")
    assert (r.error_code, r.producer_id, r.producer_epoch) == (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, -1)
    authorizer.grants.add(grant(Op.WRITE, RT.TRANSACTIONAL_ID, "tx"))
    assert _init(services, "tx").error_code == E.COORDINATOR_NOT_AVAILABLE


@pytest.mark.parametrize(
    "grants",
    [
        {grant(Op.IDEMPOTENT_WRITE, RT.CLUSTER, CLUSTER_NAME)},
        {grant(Op.WRITE, RT.TOPIC, "any-topic")},  # KIP-679: Write on some topic is enough
    ],
    ids=["idempotent-write", "write-on-a-topic"],
)
def test_idempotent_init_producer_id_needs_idempotent_write_or_write_on_some_topic(services, authorizer, grants):
    r = _init(services, None)
    assert (r.error_code, r.producer_id) == (E.CLUSTER_AUTHORIZATION_FAILED, -1)
    authorizer.grants |= grants
    r = _init(services, None)
    assert r.error_code == E.NONE and r.producer_id >= 0


def test_idempotent_init_producer_id_is_not_granted_by_read(services, authorizer):
    authorizer.grants.add(grant(Op.READ, RT.TOPIC, "t"))
    assert _init(services, None).error_code == E.CLUSTER_AUTHORIZATION_FAILED


# -- AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn -------------------------------------------------
def _add_partitions(services, topics):
    T = API_BY_KEY[add_partitions_to_txn.API_KEY].Request.AddPartitionsToTxnTopic
    r = call(
        services,
        add_partitions_to_txn,
        3,
        v3_and_below_transactional_id="tx",
        v3_and_below_producer_id=1,
        v3_and_below_producer_epoch=0,
        v3_and_below_topics=[T(name=n, partitions=ps) for n, ps in topics.items()],
    )
    return part_codes(r, "results_by_topic_v3_and_below", "results_by_partition", "partition_error_code")


def test_add_partitions_to_txn_needs_write_on_the_transactional_id_for_every_partition(services, authorizer):
    authorizer.grants.add(grant(Op.WRITE, RT.TOPIC, "t"))
    assert _add_partitions(services, {"t": [0, 1]}) == dict.fromkeys(
        [("t", 0), ("t", 1)], E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    )


def test_add_partitions_to_txn_fails_unwritable_topics_and_attempts_nothing_else(services, authorizer):
    authorizer.grants |= {
        grant(Op.WRITE, RT.TRANSACTIONAL_ID, "tx"),
        grant(Op.WRITE, RT.TOPIC, "t"),
        grant(Op.WRITE, RT.TOPIC, "gone"),
        grant(Op.READ, RT.TOPIC, "r"),
        grant(Op.WRITE, RT.TOPIC, "__consumer_offsets"),
    }
    assert _add_partitions(services, {"t": [0], "r": [0], "gone": [0], "__consumer_offsets": [0]}) == {
        ("t", 0): E.OPERATION_NOT_ATTEMPTED,
        ("r", 0): E.TOPIC_AUTHORIZATION_FAILED,
        ("gone", 0): E.UNKNOWN_TOPIC_OR_PARTITION,
        ("__consumer_offsets", 0): E.TOPIC_AUTHORIZATION_FAILED,  # internal topics never, as Kafka
    }
    assert _add_partitions(services, {"t": [0, 1]}) == dict.fromkeys([("t", 0), ("t", 1)], E.COORDINATOR_NOT_AVAILABLE)


def test_add_offsets_to_txn_needs_write_on_the_transactional_id_then_read_on_the_group(services, authorizer):
    def ask():
        return call(
            services, add_offsets_to_txn, 3, transactional_id="tx", producer_id=1, producer_epoch=0, group_id="g"
        ).error_code

    authorizer.grants.add(grant(Op.READ, RT.GROUP, "g"))
    assert ask() == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    authorizer.grants = {grant(Op.WRITE, RT.TRANSACTIONAL_ID, "tx")}
    assert ask() == E.GROUP_AUTHORIZATION_FAILED
    authorizer.grants.add(grant(Op.READ, RT.GROUP, "g"))
    assert ask() == E.COORDINATOR_NOT_AVAILABLE


def _txn_commit(services, topics):
    T = API_BY_KEY[txn_offset_commit.API_KEY].Request.TxnOffsetCommitRequestTopic
    P = T.TxnOffsetCommitRequestPartition
    r = call(
        services,
        txn_offset_commit,
        3,
        transactional_id="tx",
        group_id="g",
        producer_id=1,
        producer_epoch=0,
        generation_id=-1,
        member_id="",
        group_instance_id=None,
        topics=[
            T(name=n, partitions=[P(partition_index=p, committed_offset=3, committed_metadata="") for p in ps])
            for n, ps in topics.items()
        ],
    )
    return part_codes(r)


def test_txn_offset_commit_checks_transactional_id_then_group_then_each_topic(services, authorizer):
    authorizer.grants |= {grant(Op.READ, RT.GROUP, "g"), grant(Op.READ, RT.TOPIC, "t")}
    assert _txn_commit(services, {"t": [0]}) == {("t", 0): E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    authorizer.grants = {grant(Op.WRITE, RT.TRANSACTIONAL_ID, "tx"), grant(Op.READ, RT.TOPIC, "t")}
    assert _txn_commit(services, {"t": [0]}) == {("t", 0): E.GROUP_AUTHORIZATION_FAILED}
    authorizer.grants.add(grant(Op.READ, RT.GROUP, "g"))
    assert _txn_commit(services, {"t": [0], "secret": [0]}) == {
        ("t", 0): E.COORDINATOR_NOT_AVAILABLE,
        ("secret", 0): E.TOPIC_AUTHORIZATION_FAILED,
    }


def test_end_txn_needs_write_on_the_transactional_id(services, authorizer):
    def ask():
        return call(services, end_txn, 3, transactional_id="tx", producer_id=1, producer_epoch=0, committed=True)

    authorizer.grants.add(grant(Op.DESCRIBE, RT.TRANSACTIONAL_ID, "tx"))
    assert ask().error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    authorizer.grants.add(grant(Op.WRITE, RT.TRANSACTIONAL_ID, "tx"))
    assert ask().error_code == E.COORDINATOR_NOT_AVAILABLE


# -- DescribeTransactions, ListTransactions ----------------------------------------------------------------------
def _ongoing(services, *ids):
    tc = services.txn_coordinator
    for tid in ids:
        tc.topic.loaded[tc.partition_of(tid)] = 0
        tc.txns[tid] = TxnMetadata(
            tid, producer_id=100, producer_epoch=1, timeout_ms=60000, state=TxnState.ONGOING,
            partitions={("t", 0), ("secret", 0)}, start_ms=1,
        )  # fmt: skip


def test_describe_transactions_needs_describe_per_id_and_hides_undescribable_topics(services, authorizer):
    _ongoing(services, "mine", "theirs")
    authorizer.grants |= {grant(Op.WRITE, RT.TRANSACTIONAL_ID, "mine"), grant(Op.WRITE, RT.TOPIC, "t")}
    r = call(services, describe_transactions, 0, transactional_ids=["mine", "theirs"])
    mine, theirs = r.transaction_states
    assert (theirs.error_code, theirs.topics, theirs.producer_id) == (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, [], 0)
    assert (mine.error_code, mine.transaction_state, mine.producer_id) == (E.NONE, "Ongoing", 100)
    assert [(t.topic, t.partitions) for t in mine.topics] == [("t", [0])]


def test_list_transactions_silently_lists_only_describable_ids(services, authorizer):
    _ongoing(services, "mine", "theirs")
    authorizer.grants.add(grant(Op.DESCRIBE, RT.TRANSACTIONAL_ID, "mine"))
    r = call(services, list_transactions, 0, state_filters=[], producer_id_filters=[])
    assert (r.error_code, [s.transactional_id for s in r.transaction_states]) == (E.NONE, ["mine"])


def test_sync_group_v5_without_protocol_type_is_inconsistent_before_authorization(services):
    r = call(
        services,
        sync_group,
        5,
        group_id="g",
        generation_id=1,
        member_id="m-1",
        group_instance_id=None,
        protocol_type=None,
        protocol_name="range",
        assignments=[],
    )
    assert r.error_code == E.INCONSISTENT_GROUP_PROTOCOL  # Kafka checks the mandatory fields first
