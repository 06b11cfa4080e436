"""Kafka's per-API authorization rules as a table (``reference/security.md`` §6; Kafka's
``AuthorizerIntegrationTest.requestKeysToAcls``): for each served API, a request at a fixed version naming a
test's topic, group and transactional id, the error a principal without ACLs gets, and the ACLs that let the
request through the authorization check.

``ApiCase.request(names)`` builds the body from plain dicts (``build``: nested structs and arrays of structs as
dicts and lists of dicts, converted through the API's declared schema); ``error_codes(response)`` collects every
``*error_code`` field of the answer, at any depth. A request "passes" when none of those codes is an
authorization failure (29, 30, 31, 53); what else it answers (UNKNOWN_MEMBER_ID for a made-up member, ...) is the
handler's business, not the authorizer's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.records.batch_builder import build_batch
from spark_kafkalog.security.acl import AclBinding, AclOperation, ResourceType

from .acl_clients import acl

__all__ = ["AUTHORIZATION_FAILURES", "CASES", "ApiCase", "Names", "build", "error_codes"]

O = AclOperation  # noqa: E741 (the tables read as Kafka's ACL lines)
R = ResourceType
TOPIC, GROUP, CLUSTER, TXN = 29, 30, 31, 53
AUTHORIZATION_FAILURES = frozenset({TOPIC, GROUP, CLUSTER, TXN})


@dataclass(frozen=True)
class Names:
    """One test's resources: an existing topic (one partition, one record), a group and a transactional id nobody
    has used, a topic name that does not exist yet, and the principal under test."""

    topic: str
    group: str
    tid: str
    new_topic: str
    principal: str


def build(api_key: int, version: int, data: dict[str, Any]) -> Any:
    """The request body of ``api_key`` at ``version`` from ``data`` (nested dicts for structs)."""
    spec = API_BY_KEY[api_key].request

    def convert(struct_spec: Any, values: dict[str, Any]) -> Any:
        kwargs = {}
        for f in struct_spec.fields:
            if f.name not in values:
                continue
            v = values[f.name]
            if f.kind == "struct":
                v = convert(f.struct_spec, v)
            elif f.kind == "array" and not f.prim and v is not None:
                v = [convert(f.struct_spec, item) for item in v]
            kwargs[f.name] = v
        unknown = set(values) - {f.name for f in struct_spec.fields}
        if unknown:
            raise KeyError(f"{struct_spec.cls.__name__} has no fields {sorted(unknown)}")
        return struct_spec.cls(**kwargs)

    return convert(spec, data)


def error_codes(message: Any) -> list[int]:
    """Every ``*error_code`` value in ``message`` and its nested structs, depth first."""
    found: list[int] = []
    fields = getattr(message, "__slots__", None) or list(getattr(message, "__dict__", {}))
    for name in fields:
        value = getattr(message, name, None)
        if name.endswith("error_code") and isinstance(value, int):
            found.append(value)
        elif isinstance(value, list):
            for item in value:
                if hasattr(item, "__slots__") or hasattr(item, "__dict__"):
                    found += error_codes(item)
        elif hasattr(value, "__slots__") and not isinstance(value, (str, bytes)):
            found += error_codes(value)
    return found


@dataclass(frozen=True)
class ApiCase:
    id: str
    api_key: ApiKey
    version: int
    body: Callable[[Names], dict[str, Any]]
    denied: int
    grants: Callable[[Names], list[AclBinding]]

    def request(self, names: Names) -> Any:
        return build(self.api_key, self.version, self.body(names))


def _allow(op: AclOperation, rtype: ResourceType, name_of: Callable[[Names], str]) -> Callable[[Names], AclBinding]:
    return lambda n: acl(n.principal, op, rtype, name_of(n))


def _grants(*makers: Callable[[Names], AclBinding]) -> Callable[[Names], list[AclBinding]]:
    return lambda n: [m(n) for m in makers]


def topic_of(n: Names) -> str:
    return n.topic


def group_of(n: Names) -> str:
    return n.group


def tid_of(n: Names) -> str:
    return n.tid


def new_topic_of(n: Names) -> str:
    return n.new_topic


def cluster_of(n: Names) -> str:
    return "kafka-cluster"


def _records() -> bytes:
    return bytes(build_batch([(0, b"k", b"authz", [])]))


def _one_partition(n: Names, **fields: Any) -> list[dict[str, Any]]:
    return [{"name": n.topic, "partitions": [{"partition_index": 0, **fields}]}]


CASES: list[ApiCase] = [
    ApiCase(
        "Produce",
        ApiKey.PRODUCE,
        9,
        lambda n: {
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [{"name": n.topic, "partition_data": [{"index": 0, "records": _records()}]}],
        },
        TOPIC,
        _grants(_allow(O.WRITE, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "Fetch",
        ApiKey.FETCH,
        12,
        lambda n: {
            "replica_id": -1,
            "max_wait_ms": 0,
            "min_bytes": 1,
            "max_bytes": 1 << 20,
            "session_epoch": -1,
            "topics": [
                {
                    "topic": n.topic,
                    "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}],
                }
            ],
        },
        TOPIC,
        _grants(_allow(O.READ, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "ListOffsets",
        ApiKey.LIST_OFFSETS,
        7,
        lambda n: {"replica_id": -1, "topics": _one_partition(n, current_leader_epoch=-1, timestamp=-1)},
        TOPIC,
        _grants(_allow(O.DESCRIBE, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "OffsetForLeaderEpoch",
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        4,
        lambda n: {
            "replica_id": -1,
            "topics": [
                {"topic": n.topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}
            ],
        },
        TOPIC,
        _grants(_allow(O.DESCRIBE, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "FindCoordinator-group",
        ApiKey.FIND_COORDINATOR,
        3,
        lambda n: {"key": n.group, "key_type": 0},
        GROUP,
        _grants(_allow(O.DESCRIBE, R.GROUP, group_of)),
    ),
    ApiCase(
        "FindCoordinator-transaction",
        ApiKey.FIND_COORDINATOR,
        3,
        lambda n: {"key": n.tid, "key_type": 1},
        TXN,
        _grants(_allow(O.DESCRIBE, R.TRANSACTIONAL_ID, tid_of)),
    ),
    ApiCase(
        "JoinGroup",
        ApiKey.JOIN_GROUP,
        5,
        lambda n: {
            "group_id": n.group,
            "session_timeout_ms": 10000,
            "rebalance_timeout_ms": 10000,
            "member_id": "",
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}],
        },
        GROUP,
        _grants(_allow(O.READ, R.GROUP, group_of)),
    ),
    ApiCase(
        "SyncGroup",
        ApiKey.SYNC_GROUP,
        3,
        lambda n: {"group_id": n.group, "generation_id": 1, "member_id": "m", "assignments": []},
        GROUP,
        _grants(_allow(O.READ, R.GROUP, group_of)),
    ),
    ApiCase(
        "Heartbeat",
        ApiKey.HEARTBEAT,
        4,
        lambda n: {"group_id": n.group, "generation_id": 1, "member_id": "m"},
        GROUP,
        _grants(_allow(O.READ, R.GROUP, group_of)),
    ),
    ApiCase(
        "LeaveGroup",
        ApiKey.LEAVE_GROUP,
        3,
        lambda n: {"group_id": n.group, "members": [{"member_id": "m"}]},
        GROUP,
        _grants(_allow(O.READ, R.GROUP, group_of)),
    ),
    ApiCase(
        "OffsetCommit",
        ApiKey.OFFSET_COMMIT,
        8,
        lambda n: {
            "group_id": n.group,
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "topics": _one_partition(n, committed_offset=0, committed_leader_epoch=-1),
        },
        GROUP,
        _grants(_allow(O.READ, R.GROUP, group_of), _allow(O.READ, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "OffsetFetch",
        ApiKey.OFFSET_FETCH,
        7,
        lambda n: {"group_id": n.group, "topics": [{"name": n.topic, "partition_indexes": [0]}]},
        GROUP,
        _grants(_allow(O.DESCRIBE, R.GROUP, group_of), _allow(O.DESCRIBE, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "DescribeGroups",
        ApiKey.DESCRIBE_GROUPS,
        5,
        lambda n: {"groups": [n.group]},
        GROUP,
        _grants(_allow(O.DESCRIBE, R.GROUP, group_of)),
    ),
    ApiCase(
        "DeleteGroups",
        ApiKey.DELETE_GROUPS,
        2,
        lambda n: {"groups_names": [n.group]},
        GROUP,
        _grants(_allow(O.DELETE, R.GROUP, group_of)),
    ),
    ApiCase(
        "OffsetDelete",
        ApiKey.OFFSET_DELETE,
        0,
        lambda n: {"group_id": n.group, "topics": [{"name": n.topic, "partitions": [{"partition_index": 0}]}]},
        GROUP,
        _grants(_allow(O.DELETE, R.GROUP, group_of), _allow(O.READ, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "CreateTopics",
        ApiKey.CREATE_TOPICS,
        5,
        lambda n: {
            "topics": [{"name": n.new_topic, "num_partitions": 1, "replication_factor": 1}],
            "timeout_ms": 10000,
        },
        TOPIC,
        # DescribeConfigs too: without it the created topic's TopicConfigErrorCode is 29 (its configs are hidden)
        _grants(_allow(O.CREATE, R.TOPIC, new_topic_of), _allow(O.DESCRIBE_CONFIGS, R.TOPIC, new_topic_of)),
    ),
    ApiCase(
        "DeleteTopics",
        ApiKey.DELETE_TOPICS,
        5,
        lambda n: {"topic_names": [n.topic], "timeout_ms": 10000},
        TOPIC,
        _grants(_allow(O.DELETE, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "DeleteRecords",
        ApiKey.DELETE_RECORDS,
        2,
        lambda n: {"topics": _one_partition(n, offset=0), "timeout_ms": 10000},
        TOPIC,
        _grants(_allow(O.DELETE, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "CreatePartitions",
        ApiKey.CREATE_PARTITIONS,
        3,
        lambda n: {"topics": [{"name": n.topic, "count": 2, "assignments": None}], "timeout_ms": 10000},
        TOPIC,
        _grants(_allow(O.ALTER, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "DescribeConfigs-topic",
        ApiKey.DESCRIBE_CONFIGS,
        4,
        lambda n: {"resources": [{"resource_type": 2, "resource_name": n.topic, "configuration_keys": None}]},
        TOPIC,
        _grants(_allow(O.DESCRIBE_CONFIGS, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "DescribeConfigs-broker",
        ApiKey.DESCRIBE_CONFIGS,
        4,
        lambda n: {"resources": [{"resource_type": 4, "resource_name": "0", "configuration_keys": None}]},
        CLUSTER,
        _grants(_allow(O.DESCRIBE_CONFIGS, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "AlterConfigs-topic",
        ApiKey.ALTER_CONFIGS,
        2,
        lambda n: {
            "resources": [
                {"resource_type": 2, "resource_name": n.topic, "configs": [{"name": "retention.ms", "value": "1000"}]}
            ],
            "validate_only": True,
        },
        TOPIC,
        _grants(_allow(O.ALTER_CONFIGS, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "IncrementalAlterConfigs-broker",
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        1,
        lambda n: {
            "resources": [
                {
                    "resource_type": 4,
                    # "": the cluster-wide default; a named broker other than the receiver is INVALID_REQUEST first
                    "resource_name": "",
                    "configs": [{"name": "log.cleaner.threads", "config_operation": 0, "value": "1"}],
                }
            ],
            "validate_only": True,
        },
        CLUSTER,
        _grants(_allow(O.ALTER_CONFIGS, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "InitProducerId-transactional",
        ApiKey.INIT_PRODUCER_ID,
        4,
        lambda n: {"transactional_id": n.tid, "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1},
        TXN,
        _grants(_allow(O.WRITE, R.TRANSACTIONAL_ID, tid_of)),
    ),
    ApiCase(
        "AddPartitionsToTxn",
        ApiKey.ADD_PARTITIONS_TO_TXN,
        3,
        lambda n: {
            "v3_and_below_transactional_id": n.tid,
            "v3_and_below_producer_id": 1,
            "v3_and_below_producer_epoch": 0,
            "v3_and_below_topics": [{"name": n.topic, "partitions": [0]}],
        },
        TXN,
        _grants(_allow(O.WRITE, R.TRANSACTIONAL_ID, tid_of), _allow(O.WRITE, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "AddOffsetsToTxn",
        ApiKey.ADD_OFFSETS_TO_TXN,
        3,
        lambda n: {"transactional_id": n.tid, "producer_id": 1, "producer_epoch": 0, "group_id": n.group},
        TXN,
        _grants(_allow(O.WRITE, R.TRANSACTIONAL_ID, tid_of), _allow(O.READ, R.GROUP, group_of)),
    ),
    ApiCase(
        "TxnOffsetCommit",
        ApiKey.TXN_OFFSET_COMMIT,
        3,
        lambda n: {
            "transactional_id": n.tid,
            "group_id": n.group,
            "producer_id": 1,
            "producer_epoch": 0,
            "generation_id": -1,
            "member_id": "",
            "topics": _one_partition(n, committed_offset=0, committed_leader_epoch=-1),
        },
        TXN,
        _grants(
            _allow(O.WRITE, R.TRANSACTIONAL_ID, tid_of),
            _allow(O.READ, R.GROUP, group_of),
            _allow(O.READ, R.TOPIC, topic_of),
        ),
    ),
    ApiCase(
        "EndTxn",
        ApiKey.END_TXN,
        3,
        lambda n: {"transactional_id": n.tid, "producer_id": 1, "producer_epoch": 0, "committed": True},
        TXN,
        _grants(_allow(O.WRITE, R.TRANSACTIONAL_ID, tid_of)),
    ),
    ApiCase(
        "DescribeTransactions",
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        lambda n: {"transactional_ids": [n.tid]},
        TXN,
        _grants(_allow(O.DESCRIBE, R.TRANSACTIONAL_ID, tid_of)),
    ),
    ApiCase(
        "DescribeProducers",
        ApiKey.DESCRIBE_PRODUCERS,
        0,
        lambda n: {"topics": [{"name": n.topic, "partition_indexes": [0]}]},
        TOPIC,
        _grants(_allow(O.READ, R.TOPIC, topic_of)),
    ),
    ApiCase(
        "DescribeAcls",
        ApiKey.DESCRIBE_ACLS,
        2,
        lambda n: {
            "resource_type_filter": 1,
            "resource_name_filter": None,
            "pattern_type_filter": 1,
            "principal_filter": None,
            "host_filter": None,
            "operation": 1,
            "permission_type": 1,
        },
        CLUSTER,
        _grants(_allow(O.DESCRIBE, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "CreateAcls",
        ApiKey.CREATE_ACLS,
        2,
        lambda n: {
            "creations": [
                {
                    "resource_type": 2,
                    "resource_name": f"harmless-{n.topic}",
                    "resource_pattern_type": 3,
                    "principal": "User:nobody",
                    "host": "*",
                    "operation": 3,
                    "permission_type": 3,
                }
            ]
        },
        CLUSTER,
        _grants(_allow(O.ALTER, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "DeleteAcls",
        ApiKey.DELETE_ACLS,
        2,
        lambda n: {
            "filters": [
                {
                    "resource_type_filter": 2,
                    "resource_name_filter": f"harmless-{n.topic}",
                    "pattern_type_filter": 3,
                    "principal_filter": None,
                    "host_filter": None,
                    "operation": 1,
                    "permission_type": 1,
                }
            ]
        },
        CLUSTER,
        _grants(_allow(O.ALTER, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "AlterPartitionReassignments",
        ApiKey.ALTER_PARTITION_REASSIGNMENTS,
        0,
        lambda n: {"timeout_ms": 10000, "topics": []},
        CLUSTER,
        _grants(_allow(O.ALTER, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "ListPartitionReassignments",
        ApiKey.LIST_PARTITION_REASSIGNMENTS,
        0,
        lambda n: {"timeout_ms": 10000, "topics": None},
        CLUSTER,
        _grants(_allow(O.DESCRIBE, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "DescribeLogDirs",
        ApiKey.DESCRIBE_LOG_DIRS,
        4,
        lambda n: {"topics": None},
        CLUSTER,
        _grants(_allow(O.DESCRIBE, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "DescribeClientQuotas",
        ApiKey.DESCRIBE_CLIENT_QUOTAS,
        1,
        lambda n: {"components": [], "strict": False},
        CLUSTER,
        _grants(_allow(O.DESCRIBE_CONFIGS, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "AlterClientQuotas",
        ApiKey.ALTER_CLIENT_QUOTAS,
        1,
        lambda n: {
            "entries": [
                {
                    "entity": [{"entity_type": "user", "entity_name": "nobody"}],
                    "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}],
                }
            ],
            "validate_only": True,
        },
        CLUSTER,
        _grants(_allow(O.ALTER_CONFIGS, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "DescribeUserScramCredentials",
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
        0,
        lambda n: {"users": [{"name": "nobody"}]},
        CLUSTER,
        _grants(_allow(O.DESCRIBE, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "WriteTxnMarkers",
        ApiKey.WRITE_TXN_MARKERS,
        1,
        lambda n: {
            "markers": [
                {
                    "producer_id": 999_999,
                    "producer_epoch": 0,
                    "transaction_result": False,
                    "topics": [{"name": n.topic, "partition_indexes": [0]}],
                    "coordinator_epoch": 0,
                }
            ]
        },
        CLUSTER,
        _grants(_allow(O.CLUSTER_ACTION, R.CLUSTER, cluster_of)),
    ),
    ApiCase(
        "ControlledShutdown",
        ApiKey.CONTROLLED_SHUTDOWN,
        3,
        lambda n: {"broker_id": 99, "broker_epoch": -1},  # a broker that does not exist: nothing shuts down
        CLUSTER,
        _grants(_allow(O.CLUSTER_ACTION, R.CLUSTER, cluster_of)),
    ),
]
