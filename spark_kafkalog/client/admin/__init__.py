"""The admin client (Kafka's ``clients/admin``): ``AdminClient`` and the calls it groups.

``admin`` is the API (topics, partitions, records, and the calls below); ``admin_records`` DeleteRecords;
``admin_configs`` the DescribeConfigs/AlterConfigs/IncrementalAlterConfigs resources and operations;
``admin_reassignments`` partition reassignment (KIP-455); ``admin_scram`` SCRAM credentials (KIP-554);
``admin_quotas`` client quotas (KIP-546); ``admin_acls`` ACLs (CreateAcls, DescribeAcls, DeleteAcls);
``admin_access`` the ``AdminClient`` calls of those three (``AccessAdminMixin``); ``admin_share_groups`` share
groups (KIP-932: ShareGroupDescribe, DescribeShareGroupOffsets); ``admin_errors``
``AdminOperationError``; ``group_admin`` the coordinator-routed consumer-group calls (also used by the consumer
to commit and fetch offsets).
"""

from spark_kafkalog.client.admin.admin import AdminClient, AdminOperationError
from spark_kafkalog.client.admin.admin_quotas import (
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilterComponent,
    QuotaOp,
)
from spark_kafkalog.client.admin.admin_scram import (
    ScramCredentialInfo,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

__all__ = [
    "AdminClient",
    "AdminOperationError",
    "ClientQuotaAlteration",
    "ClientQuotaEntity",
    "ClientQuotaFilterComponent",
    "QuotaOp",
    "ScramCredentialInfo",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
]
