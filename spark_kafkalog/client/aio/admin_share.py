"""``AIOShareAdminMixin``: the blocking ``AdminClient``'s share-group calls (KIP-932) as coroutines, for
``AIOAdminClient``: ``list_share_groups``, ``describe_share_groups``, ``list_share_group_offsets``,
``alter_share_group_offsets`` and ``delete_share_group_offsets``.

Same names, arguments, results and errors as ``AdminClient``'s; the requests and answers are
``admin_share_groups``' pure functions, sent to the group's coordinator by ``AsyncGroupCalls.group_call``
(coordinator moves retried). Concurrency: coroutines of the admin's event loop; mixed into ``AIOAdminClient``
only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from spark_kafkalog.client.admin import admin_share_groups as share
from spark_kafkalog.client.admin.admin_share_groups import ShareGroupDescription, SharePartitionOffset
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ApiKey

if TYPE_CHECKING:
    from spark_kafkalog.client.admin.group_requests import GroupListing

    from .group_calls import AsyncGroupCalls


class AIOShareAdminMixin:
    _groups: AsyncGroupCalls

    if TYPE_CHECKING:

        async def list_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]: ...  # the client's

    async def list_share_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]:
        """The share groups of the cluster (ListGroups' groups of type "share"), optionally only in ``states``."""
        return [g for g in await self.list_groups(states) if g.protocol_type == "share"]

    async def describe_share_groups(self, group_ids: Iterable[str]) -> dict[str, ShareGroupDescription]:
        """Each share group (ShareGroupDescribe); a group that is not a share group raises GROUP_ID_NOT_FOUND."""
        out = {}
        for group_id in dict.fromkeys(group_ids):

            def check(response: Any, version: int, group_id: str = group_id) -> ShareGroupDescription:
                node = self._groups.cached_coordinator(group_id)
                return share.describe_share_group_answer(response, group_id, node, self._groups.error)

            def build(version: int, group_id: str = group_id) -> Any:
                return share.describe_share_group_request(group_id)

            out[group_id] = await self._groups.group_call(
                group_id, ApiKey.SHARE_GROUP_DESCRIBE, build, check, "ShareGroupDescribe"
            )
        return out

    async def list_share_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, SharePartitionOffset]:
        """The start offset (SPSO) of each share-partition of the group, with its lag when known
        (DescribeShareGroupOffsets)."""
        wanted = None if partitions is None else list(partitions)
        return await self._groups.group_call(
            group_id,
            ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
            lambda version: share.share_offsets_request(group_id, wanted),
            lambda response, version: share.share_offsets_answer(response, version, group_id, self._groups.error),
            "DescribeShareGroupOffsets",
        )

    async def alter_share_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Set the start offset of share-partitions of an empty share group; partition failures raise one
        ``AdminOperationError``."""
        wanted = {TopicPartition(*tp): int(o) for tp, o in offsets.items()}
        results = await self._groups.group_call(
            group_id,
            ApiKey.ALTER_SHARE_GROUP_OFFSETS,
            lambda version: share.alter_share_offsets_request(group_id, wanted),
            lambda response, version: share.alter_share_offsets_answer(response, group_id, self._groups.error),
            "AlterShareGroupOffsets",
        )
        share.raise_failures("AlterShareGroupOffsets", results)

    async def delete_share_group_offsets(self, group_id: str, topics: Iterable[str]) -> None:
        """Forget the share state of whole topics of an empty share group; topic failures raise one
        ``AdminOperationError``."""
        names = list(topics)
        results = await self._groups.group_call(
            group_id,
            ApiKey.DELETE_SHARE_GROUP_OFFSETS,
            lambda version: share.delete_share_offsets_request(group_id, names),
            lambda response, version: share.delete_share_offsets_answer(response, group_id, self._groups.error),
            "DeleteShareGroupOffsets",
        )
        share.raise_failures("DeleteShareGroupOffsets", results)
