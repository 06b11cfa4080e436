"""Kafka error codes as data: code, name, whether a client may retry, and a short description.

``ErrorCode`` is an ``IntEnum``; a code this table does not know still converts
(``ErrorCode(4242)``) to a pseudo-member named ``UNKNOWN_CODE_4242`` that keeps the raw value, so a
response from a newer broker never fails to decode because of an error code.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import IntEnum
from typing import TYPE_CHECKING

# code, name, retriable, description
_TABLE: tuple[tuple[int, str, bool, str], ...] = (
    (-1, "UNKNOWN_SERVER_ERROR", False, "unexpected server error"),
    (0, "NONE", False, "no error"),
    (1, "OFFSET_OUT_OF_RANGE", False, "offset is outside the range the server holds for the partition"),
    (2, "CORRUPT_MESSAGE", True, "record failed its CRC check, exceeds its size, or is otherwise malformed"),
    (3, "UNKNOWN_TOPIC_OR_PARTITION", True, "the server does not host this topic-partition"),
    (4, "INVALID_FETCH_SIZE", False, "requested fetch size is invalid"),
    (5, "LEADER_NOT_AVAILABLE", True, "no leader for this partition right now (leader election in progress)"),
    (6, "NOT_LEADER_OR_FOLLOWER", True, "this server is not the leader or a follower of the partition"),
    (7, "REQUEST_TIMED_OUT", True, "the request timed out"),
    (8, "BROKER_NOT_AVAILABLE", False, "the broker is not available"),
    (9, "REPLICA_NOT_AVAILABLE", True, "the replica is not available for the requested partition"),
    (10, "MESSAGE_TOO_LARGE", False, "a record batch is larger than the maximum the server accepts"),
    (11, "STALE_CONTROLLER_EPOCH", False, "the controller moved to another broker"),
    (12, "OFFSET_METADATA_TOO_LARGE", False, "offset commit metadata is too large"),
    (13, "NETWORK_EXCEPTION", True, "the server disconnected before a response was received"),
    (14, "COORDINATOR_LOAD_IN_PROGRESS", True, "the coordinator is still loading its state"),
    (15, "COORDINATOR_NOT_AVAILABLE", True, "the coordinator is not available"),
    (16, "NOT_COORDINATOR", True, "this broker is not the coordinator of the group"),
    (17, "INVALID_TOPIC_EXCEPTION", False, "the topic name is invalid or the topic is internal"),
    (18, "RECORD_LIST_TOO_LARGE", False, "the batch is larger than the segment size"),
    (19, "NOT_ENOUGH_REPLICAS", True, "fewer in-sync replicas than min.insync.replicas; records rejected"),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True, "records written but to fewer in-sync replicas than required"),
    (21, "INVALID_REQUIRED_ACKS", False, "acks must be -1, 0 or 1"),
    (22, "ILLEGAL_GENERATION", False, "the group generation is not the current one"),
    (23, "INCONSISTENT_GROUP_PROTOCOL", False, "the member's protocols do not match the group's"),
    (24, "INVALID_GROUP_ID", False, "the group id is invalid"),
    (25, "UNKNOWN_MEMBER_ID", False, "the coordinator does not know this member"),
    (26, "INVALID_SESSION_TIMEOUT", False, "session timeout outside group.min/max.session.timeout.ms"),
    (27, "REBALANCE_IN_PROGRESS", False, "the group is rebalancing; rejoin"),
    (28, "INVALID_COMMIT_OFFSET_SIZE", False, "the committed offset data size is invalid"),
    (29, "TOPIC_AUTHORIZATION_FAILED", False, "not authorized for the topic"),
    (30, "GROUP_AUTHORIZATION_FAILED", False, "not authorized for the group"),
    (31, "CLUSTER_AUTHORIZATION_FAILED", False, "not authorized for the cluster"),
    (32, "INVALID_TIMESTAMP", False, "record timestamp outside the accepted range"),
    (33, "UNSUPPORTED_SASL_MECHANISM", False, "the SASL mechanism is not supported"),
    (34, "ILLEGAL_SASL_STATE", False, "request not valid in the current SASL state"),
    (35, "UNSUPPORTED_VERSION", False, "the API version is not supported"),
    (36, "TOPIC_ALREADY_EXISTS", False, "a topic with this name already exists"),
    (37, "INVALID_PARTITIONS", False, "the number of partitions is invalid"),
    (38, "INVALID_REPLICATION_FACTOR", False, "the replication factor is invalid"),
    (39, "INVALID_REPLICA_ASSIGNMENT", False, "the replica assignment is invalid"),
    (40, "INVALID_CONFIG", False, "the configuration is invalid"),
    (41, "NOT_CONTROLLER", True, "this broker is not the controller"),
    (42, "INVALID_REQUEST", False, "the request is malformed or not valid for this broker"),
    (43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", False, "the message format does not support the request"),
    (44, "POLICY_VIOLATION", False, "the request violates a configured policy"),
    (45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False, "producer sequence number out of order"),
    (46, "DUPLICATE_SEQUENCE_NUMBER", False, "producer sequence number already seen"),
    (47, "INVALID_PRODUCER_EPOCH", False, "producer epoch is older than the current one"),
    (48, "INVALID_TXN_STATE", False, "transactional operation not valid in the current state"),
    (49, "INVALID_PRODUCER_ID_MAPPING", False, "producer id not assigned to this transactional id"),
    (50, "INVALID_TRANSACTION_TIMEOUT", False, "transaction timeout above max.transaction.timeout.ms"),
    (51, "CONCURRENT_TRANSACTIONS", True, "another operation on the transaction is in progress"),
    (52, "TRANSACTION_COORDINATOR_FENCED", False, "the transaction coordinator is no longer current"),
    (53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False, "not authorized for the transactional id"),
    (54, "SECURITY_DISABLED", False, "security features are disabled"),
    (55, "OPERATION_NOT_ATTEMPTED", False, "operation skipped because another one in the batch failed"),
    (56, "KAFKA_STORAGE_ERROR", True, "disk error while accessing the log"),
    (57, "LOG_DIR_NOT_FOUND", False, "the log directory does not exist"),
    (58, "SASL_AUTHENTICATION_FAILED", False, "SASL authentication failed"),
    (59, "UNKNOWN_PRODUCER_ID", False, "the broker has no state for this producer id"),
    (60, "REASSIGNMENT_IN_PROGRESS", False, "a partition reassignment is in progress"),
    (61, "DELEGATION_TOKEN_AUTH_DISABLED", False, "delegation token authentication is disabled"),
    (62, "DELEGATION_TOKEN_NOT_FOUND", False, "delegation token not found"),
    (63, "DELEGATION_TOKEN_OWNER_MISMATCH", False, "principal does not own the delegation token"),
    (64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", False, "delegation token requests not allowed on this channel"),
    (65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False, "not authorized for the delegation token"),
    (66, "DELEGATION_TOKEN_EXPIRED", False, "delegation token expired"),
    (67, "INVALID_PRINCIPAL_TYPE", False, "principal type not supported"),
    (68, "NON_EMPTY_GROUP", False, "the group is not empty"),
    (69, "GROUP_ID_NOT_FOUND", False, "the group does not exist"),
    (70, "FETCH_SESSION_ID_NOT_FOUND", True, "the fetch session id is not known"),
    (71, "INVALID_FETCH_SESSION_EPOCH", True, "the fetch session epoch is invalid"),
    (72, "LISTENER_NOT_FOUND", True, "no endpoint for the listener on the leader"),
    (73, "TOPIC_DELETION_DISABLED", False, "topic deletion is disabled"),
    (74, "FENCED_LEADER_EPOCH", True, "the request's leader epoch is older than the broker's"),
    (75, "UNKNOWN_LEADER_EPOCH", True, "the request's leader epoch is newer than the broker's"),
    (76, "UNSUPPORTED_COMPRESSION_TYPE", False, "the requesting client does not support the compression type"),
    (77, "STALE_BROKER_EPOCH", False, "the broker epoch changed"),
    (78, "OFFSET_NOT_AVAILABLE", True, "leader high watermark has not caught up after an election"),
    (79, "MEMBER_ID_REQUIRED", False, "rejoin with the member id the coordinator assigned"),
    (80, "PREFERRED_LEADER_NOT_AVAILABLE", True, "the preferred leader is not available"),
    (81, "GROUP_MAX_SIZE_REACHED", False, "the group has reached group.max.size"),
    (82, "FENCED_INSTANCE_ID", False, "another member with the same group.instance.id joined"),
    (83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", True, "no eligible leader for the partition"),
    (84, "ELECTION_NOT_NEEDED", True, "the leader election is not needed"),
    (85, "NO_REASSIGNMENT_IN_PROGRESS", False, "no reassignment is in progress"),
    (86, "GROUP_SUBSCRIBED_TO_TOPIC", False, "the group is subscribed to the topic"),
    (87, "INVALID_RECORD", False, "a record failed validation on the broker"),
    (88, "UNSTABLE_OFFSET_COMMIT", True, "there are unstable offsets that need to be cleared"),
    (89, "THROTTLING_QUOTA_EXCEEDED", True, "the throttling quota has been exceeded"),
    (90, "PRODUCER_FENCED", False, "a newer producer with the same transactional id exists"),
    (91, "RESOURCE_NOT_FOUND", False, "the resource does not exist"),
    (92, "DUPLICATE_RESOURCE", False, "the resource is duplicated in the request"),
    (93, "UNACCEPTABLE_CREDENTIAL", False, "the credential does not meet the requirements"),
    (94, "INCONSISTENT_VOTER_SET", False, "the voter set is inconsistent"),
    (95, "INVALID_UPDATE_VERSION", False, "the update version is invalid"),
    (96, "FEATURE_UPDATE_FAILED", False, "the feature update failed"),
    (97, "PRINCIPAL_DESERIALIZATION_FAILURE", False, "the principal could not be deserialized"),
    (98, "SNAPSHOT_NOT_FOUND", False, "the snapshot was not found"),
    (99, "POSITION_OUT_OF_RANGE", False, "the position is out of range"),
    (100, "UNKNOWN_TOPIC_ID", True, "no topic with this id"),
    (101, "DUPLICATE_BROKER_REGISTRATION", False, "the broker id is already registered"),
    (102, "BROKER_ID_NOT_REGISTERED", False, "the broker id is not registered"),
    (103, "INCONSISTENT_TOPIC_ID", True, "the topic id does not match the log's topic id"),
    (104, "INCONSISTENT_CLUSTER_ID", False, "the cluster id does not match"),
    (105, "TRANSACTIONAL_ID_NOT_FOUND", False, "the transactional id was not found"),
    (106, "FETCH_SESSION_TOPIC_ID_ERROR", True, "fetch session topic id mismatch"),
    (107, "INELIGIBLE_REPLICA", False, "the replica is not eligible for the ISR"),
    (108, "NEW_LEADER_ELECTED", False, "a new leader was elected"),
    (109, "OFFSET_MOVED_TO_TIERED_STORAGE", False, "the offset was moved to tiered storage"),
    (110, "FENCED_MEMBER_EPOCH", False, "the member epoch is fenced"),
    (111, "UNRELEASED_INSTANCE_ID", False, "the instance id is still used by another member"),
    (112, "UNSUPPORTED_ASSIGNOR", False, "the assignor is not supported"),
    (113, "STALE_MEMBER_EPOCH", False, "the member epoch is stale"),
    (114, "MISMATCHED_ENDPOINT_TYPE", False, "the request was sent to the wrong endpoint type"),
    (115, "UNSUPPORTED_ENDPOINT_TYPE", False, "the endpoint type does not support this request"),
    (116, "UNKNOWN_CONTROLLER_ID", False, "the controller id is not known"),
    (117, "UNKNOWN_SUBSCRIPTION_ID", False, "the telemetry subscription id is not known"),
    (118, "TELEMETRY_TOO_LARGE", False, "the telemetry payload is too large"),
    (119, "INVALID_REGISTRATION", False, "the controller registration is invalid"),
    (120, "TRANSACTION_ABORTABLE", False, "the server encountered an error that makes the transaction abortable"),
    (121, "INVALID_RECORD_STATE", False, "the record state is invalid: the acknowledgement could not be completed"),
    (122, "SHARE_SESSION_NOT_FOUND", True, "the share session was not found"),
    (123, "INVALID_SHARE_SESSION_EPOCH", True, "the share session epoch is invalid"),
    (124, "FENCED_STATE_EPOCH", False, "the share coordinator rejected the request: the state epoch did not match"),
    (125, "INVALID_VOTER_KEY", False, "the voter key does not match"),
    (126, "DUPLICATE_VOTER", False, "the voter is already in the voter set"),
    (127, "VOTER_NOT_FOUND", False, "the voter is not in the voter set"),
    (128, "INVALID_REGULAR_EXPRESSION", False, "the regular expression is not valid"),
    (129, "REBOOTSTRAP_REQUIRED", False, "client metadata is stale: the client should bootstrap again"),
    (130, "STREAMS_INVALID_TOPOLOGY", False, "the supplied topology is invalid"),
    (131, "STREAMS_INVALID_TOPOLOGY_EPOCH", False, "the supplied topology epoch is invalid"),
    (132, "STREAMS_TOPOLOGY_FENCED", False, "the supplied topology epoch is outdated"),
    (133, "SHARE_SESSION_LIMIT_REACHED", True, "the limit of share sessions has been reached"),
    (134, "GROUP_DELETION_FAILED", False, "DeleteGroups could not complete; see the per-group error message"),
    (135, "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED", False, "the topology description update failed"),
    (136, "CONTROLLER_ID_NOT_REGISTERED", False, "the controller id is not registered"),
)

_RETRIABLE = {code: retriable for code, _, retriable, _ in _TABLE}
_DESCRIPTION = {code: description for code, _, _, description in _TABLE}


def _missing(cls: type[IntEnum], value: object) -> IntEnum | None:
    if not isinstance(value, int) or not -(1 << 15) <= value < (1 << 15):
        return None
    member = int.__new__(cls, value)
    member._name_ = f"UNKNOWN_CODE_{value}"
    member._value_ = value
    return member


if TYPE_CHECKING:  # what the functional IntEnum below is, spelled so a type checker sees its members

    class _ErrorCodeType(type):
        def __getattr__(cls, name: str) -> ErrorCode: ...
        def __call__(cls, value: int) -> ErrorCode: ...
        def __iter__(cls) -> Iterator[ErrorCode]: ...

    class ErrorCode(int, metaclass=_ErrorCodeType):
        name: str
        value: int
        retriable: bool
        description: str

else:
    ErrorCode = IntEnum("ErrorCode", [(name, code) for code, name, _, _ in _TABLE], module=__name__)
    ErrorCode.__doc__ = "Kafka protocol error codes (int16 on the wire); unknown codes keep their raw value."
    ErrorCode._missing_ = classmethod(_missing)
    ErrorCode.retriable = property(lambda self: _RETRIABLE.get(int(self), False))
    ErrorCode.description = property(lambda self: _DESCRIPTION.get(int(self), "error code not known to this client"))


def error_info(code: int) -> tuple[int, str, bool, str]:
    """(code, name, retriable, description) for any int16 code, known or not."""
    e = ErrorCode(code)
    return int(e), e.name, e.retriable, e.description


class KafkaError(Exception):
    """An error code returned by a broker, raised by the client at its API boundary."""

    def __init__(self, code: int, message: str | None = None) -> None:
        self.code = ErrorCode(code)
        self.retriable = self.code.retriable
        text = f"{self.code.name} ({int(self.code)}): {self.code.description}"
        if message:
            text += f": {message}"
        super().__init__(text)
