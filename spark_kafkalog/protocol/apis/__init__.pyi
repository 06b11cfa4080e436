# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from typing import Literal, overload

from ..api_keys import ApiKey
from ..schema import ApiSpec as ApiSpec
from ..schema import DataSpec as DataSpec
from .add_offsets_to_txn import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse
from .add_partitions_to_txn import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from .alter_client_quotas import AlterClientQuotasRequest, AlterClientQuotasResponse
from .alter_configs import AlterConfigsRequest, AlterConfigsResponse
from .alter_partition_reassignments import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
from .alter_share_group_offsets import AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse
from .alter_user_scram_credentials import AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse
from .api_versions import ApiVersionsRequest, ApiVersionsResponse
from .consumer_group_describe import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from .consumer_group_heartbeat import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse
from .consumer_protocol_assignment import ConsumerProtocolAssignment
from .consumer_protocol_subscription import ConsumerProtocolSubscription
from .controlled_shutdown import ControlledShutdownRequest, ControlledShutdownResponse
from .create_acls import CreateAclsRequest, CreateAclsResponse
from .create_partitions import CreatePartitionsRequest, CreatePartitionsResponse
from .create_topics import CreateTopicsRequest, CreateTopicsResponse
from .delete_acls import DeleteAclsRequest, DeleteAclsResponse
from .delete_groups import DeleteGroupsRequest, DeleteGroupsResponse
from .delete_records import DeleteRecordsRequest, DeleteRecordsResponse
from .delete_share_group_offsets import DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse
from .delete_share_group_state import DeleteShareGroupStateRequest, DeleteShareGroupStateResponse
from .delete_topics import DeleteTopicsRequest, DeleteTopicsResponse
from .describe_acls import DescribeAclsRequest, DescribeAclsResponse
from .describe_client_quotas import DescribeClientQuotasRequest, DescribeClientQuotasResponse
from .describe_cluster import DescribeClusterRequest, DescribeClusterResponse
from .describe_configs import DescribeConfigsRequest, DescribeConfigsResponse
from .describe_groups import DescribeGroupsRequest, DescribeGroupsResponse
from .describe_log_dirs import DescribeLogDirsRequest, DescribeLogDirsResponse
from .describe_producers import DescribeProducersRequest, DescribeProducersResponse
from .describe_share_group_offsets import DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse
from .describe_topic_partitions import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse
from .describe_transactions import DescribeTransactionsRequest, DescribeTransactionsResponse
from .describe_user_scram_credentials import DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse
from .elect_leaders import ElectLeadersRequest, ElectLeadersResponse
from .end_txn import EndTxnRequest, EndTxnResponse
from .fetch import FetchRequest, FetchResponse
from .find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from .get_telemetry_subscriptions import GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse
from .heartbeat import HeartbeatRequest, HeartbeatResponse
from .incremental_alter_configs import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse
from .init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from .initialize_share_group_state import InitializeShareGroupStateRequest, InitializeShareGroupStateResponse
from .join_group import JoinGroupRequest, JoinGroupResponse
from .leave_group import LeaveGroupRequest, LeaveGroupResponse
from .list_client_metrics_resources import ListClientMetricsResourcesRequest, ListClientMetricsResourcesResponse
from .list_groups import ListGroupsRequest, ListGroupsResponse
from .list_offsets import ListOffsetsRequest, ListOffsetsResponse
from .list_partition_reassignments import ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse
from .list_transactions import ListTransactionsRequest, ListTransactionsResponse
from .metadata import MetadataRequest, MetadataResponse
from .offset_commit import OffsetCommitRequest, OffsetCommitResponse
from .offset_delete import OffsetDeleteRequest, OffsetDeleteResponse
from .offset_fetch import OffsetFetchRequest, OffsetFetchResponse
from .offset_for_leader_epoch import OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse
from .produce import ProduceRequest, ProduceResponse
from .push_telemetry import PushTelemetryRequest, PushTelemetryResponse
from .read_share_group_state import ReadShareGroupStateRequest, ReadShareGroupStateResponse
from .read_share_group_state_summary import ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse
from .sasl_authenticate import SaslAuthenticateRequest, SaslAuthenticateResponse
from .sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse
from .share_acknowledge import ShareAcknowledgeRequest, ShareAcknowledgeResponse
from .share_fetch import ShareFetchRequest, ShareFetchResponse
from .share_group_describe import ShareGroupDescribeRequest, ShareGroupDescribeResponse
from .share_group_heartbeat import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse
from .sync_group import SyncGroupRequest, SyncGroupResponse
from .txn_offset_commit import TxnOffsetCommitRequest, TxnOffsetCommitResponse
from .write_share_group_state import WriteShareGroupStateRequest, WriteShareGroupStateResponse
from .write_txn_markers import WriteTxnMarkersRequest, WriteTxnMarkersResponse

_API_MODULES: tuple[str, ...]
_DATA_MODULES: tuple[str, ...]

class _ApiByKey(dict[int, ApiSpec]):
    @overload
    def __getitem__(self, key: Literal[ApiKey.API_VERSIONS], /) -> ApiSpec[ApiVersionsRequest, ApiVersionsResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.PRODUCE], /) -> ApiSpec[ProduceRequest, ProduceResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.FETCH], /) -> ApiSpec[FetchRequest, FetchResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.LIST_OFFSETS], /) -> ApiSpec[ListOffsetsRequest, ListOffsetsResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.METADATA], /) -> ApiSpec[MetadataRequest, MetadataResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.CONTROLLED_SHUTDOWN], /
    ) -> ApiSpec[ControlledShutdownRequest, ControlledShutdownResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.OFFSET_COMMIT], /
    ) -> ApiSpec[OffsetCommitRequest, OffsetCommitResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.OFFSET_FETCH], /) -> ApiSpec[OffsetFetchRequest, OffsetFetchResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.FIND_COORDINATOR], /
    ) -> ApiSpec[FindCoordinatorRequest, FindCoordinatorResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.JOIN_GROUP], /) -> ApiSpec[JoinGroupRequest, JoinGroupResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.HEARTBEAT], /) -> ApiSpec[HeartbeatRequest, HeartbeatResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.LEAVE_GROUP], /) -> ApiSpec[LeaveGroupRequest, LeaveGroupResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.SYNC_GROUP], /) -> ApiSpec[SyncGroupRequest, SyncGroupResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_GROUPS], /
    ) -> ApiSpec[DescribeGroupsRequest, DescribeGroupsResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.LIST_GROUPS], /) -> ApiSpec[ListGroupsRequest, ListGroupsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.SASL_HANDSHAKE], /
    ) -> ApiSpec[SaslHandshakeRequest, SaslHandshakeResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.CREATE_TOPICS], /
    ) -> ApiSpec[CreateTopicsRequest, CreateTopicsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DELETE_TOPICS], /
    ) -> ApiSpec[DeleteTopicsRequest, DeleteTopicsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DELETE_RECORDS], /
    ) -> ApiSpec[DeleteRecordsRequest, DeleteRecordsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.INIT_PRODUCER_ID], /
    ) -> ApiSpec[InitProducerIdRequest, InitProducerIdResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.OFFSET_FOR_LEADER_EPOCH], /
    ) -> ApiSpec[OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_ACLS], /
    ) -> ApiSpec[DescribeAclsRequest, DescribeAclsResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.CREATE_ACLS], /) -> ApiSpec[CreateAclsRequest, CreateAclsResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.DELETE_ACLS], /) -> ApiSpec[DeleteAclsRequest, DeleteAclsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_CONFIGS], /
    ) -> ApiSpec[DescribeConfigsRequest, DescribeConfigsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.ALTER_CONFIGS], /
    ) -> ApiSpec[AlterConfigsRequest, AlterConfigsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_LOG_DIRS], /
    ) -> ApiSpec[DescribeLogDirsRequest, DescribeLogDirsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.SASL_AUTHENTICATE], /
    ) -> ApiSpec[SaslAuthenticateRequest, SaslAuthenticateResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.CREATE_PARTITIONS], /
    ) -> ApiSpec[CreatePartitionsRequest, CreatePartitionsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DELETE_GROUPS], /
    ) -> ApiSpec[DeleteGroupsRequest, DeleteGroupsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.INCREMENTAL_ALTER_CONFIGS], /
    ) -> ApiSpec[IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.ELECT_LEADERS], /
    ) -> ApiSpec[ElectLeadersRequest, ElectLeadersResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.ALTER_PARTITION_REASSIGNMENTS], /
    ) -> ApiSpec[AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.LIST_PARTITION_REASSIGNMENTS], /
    ) -> ApiSpec[ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.OFFSET_DELETE], /
    ) -> ApiSpec[OffsetDeleteRequest, OffsetDeleteResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_CLUSTER], /
    ) -> ApiSpec[DescribeClusterRequest, DescribeClusterResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_CLIENT_QUOTAS], /
    ) -> ApiSpec[DescribeClientQuotasRequest, DescribeClientQuotasResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.ALTER_CLIENT_QUOTAS], /
    ) -> ApiSpec[AlterClientQuotasRequest, AlterClientQuotasResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS], /
    ) -> ApiSpec[DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.ALTER_USER_SCRAM_CREDENTIALS], /
    ) -> ApiSpec[AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.ADD_PARTITIONS_TO_TXN], /
    ) -> ApiSpec[AddPartitionsToTxnRequest, AddPartitionsToTxnResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.ADD_OFFSETS_TO_TXN], /
    ) -> ApiSpec[AddOffsetsToTxnRequest, AddOffsetsToTxnResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.END_TXN], /) -> ApiSpec[EndTxnRequest, EndTxnResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.TXN_OFFSET_COMMIT], /
    ) -> ApiSpec[TxnOffsetCommitRequest, TxnOffsetCommitResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_PRODUCERS], /
    ) -> ApiSpec[DescribeProducersRequest, DescribeProducersResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_TRANSACTIONS], /
    ) -> ApiSpec[DescribeTransactionsRequest, DescribeTransactionsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.LIST_TRANSACTIONS], /
    ) -> ApiSpec[ListTransactionsRequest, ListTransactionsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.WRITE_TXN_MARKERS], /
    ) -> ApiSpec[WriteTxnMarkersRequest, WriteTxnMarkersResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.CONSUMER_GROUP_HEARTBEAT], /
    ) -> ApiSpec[ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.CONSUMER_GROUP_DESCRIBE], /
    ) -> ApiSpec[ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.GET_TELEMETRY_SUBSCRIPTIONS], /
    ) -> ApiSpec[GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.PUSH_TELEMETRY], /
    ) -> ApiSpec[PushTelemetryRequest, PushTelemetryResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.LIST_CLIENT_METRICS_RESOURCES], /
    ) -> ApiSpec[ListClientMetricsResourcesRequest, ListClientMetricsResourcesResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_TOPIC_PARTITIONS], /
    ) -> ApiSpec[DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.SHARE_GROUP_HEARTBEAT], /
    ) -> ApiSpec[ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.SHARE_GROUP_DESCRIBE], /
    ) -> ApiSpec[ShareGroupDescribeRequest, ShareGroupDescribeResponse]: ...
    @overload
    def __getitem__(self, key: Literal[ApiKey.SHARE_FETCH], /) -> ApiSpec[ShareFetchRequest, ShareFetchResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.SHARE_ACKNOWLEDGE], /
    ) -> ApiSpec[ShareAcknowledgeRequest, ShareAcknowledgeResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.INITIALIZE_SHARE_GROUP_STATE], /
    ) -> ApiSpec[InitializeShareGroupStateRequest, InitializeShareGroupStateResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.READ_SHARE_GROUP_STATE], /
    ) -> ApiSpec[ReadShareGroupStateRequest, ReadShareGroupStateResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.WRITE_SHARE_GROUP_STATE], /
    ) -> ApiSpec[WriteShareGroupStateRequest, WriteShareGroupStateResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DELETE_SHARE_GROUP_STATE], /
    ) -> ApiSpec[DeleteShareGroupStateRequest, DeleteShareGroupStateResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.READ_SHARE_GROUP_STATE_SUMMARY], /
    ) -> ApiSpec[ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS], /
    ) -> ApiSpec[DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.ALTER_SHARE_GROUP_OFFSETS], /
    ) -> ApiSpec[AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse]: ...
    @overload
    def __getitem__(
        self, key: Literal[ApiKey.DELETE_SHARE_GROUP_OFFSETS], /
    ) -> ApiSpec[DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse]: ...
    @overload
    def __getitem__(self, key: int, /) -> ApiSpec: ...

class _DataByName(dict[str, DataSpec]):
    @overload
    def __getitem__(
        self, key: Literal["ConsumerProtocolSubscription"], /
    ) -> DataSpec[ConsumerProtocolSubscription]: ...
    @overload
    def __getitem__(self, key: Literal["ConsumerProtocolAssignment"], /) -> DataSpec[ConsumerProtocolAssignment]: ...
    @overload
    def __getitem__(self, key: str, /) -> DataSpec: ...

API_BY_KEY: _ApiByKey
DATA_BY_NAME: _DataByName
