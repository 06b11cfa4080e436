"""Transaction markers: WriteTxnMarkers (key 27) requests from the transaction coordinator to the leaders of a
transaction's partitions, until every partition acknowledged its COMMIT or ABORT marker.

``TxnMarkerSender.write_markers`` groups the partitions by their leader (this broker's metadata cache) and
sends each leader one request (version as the leader supports: v0 or v1), all leaders at once. Per partition:
NONE is done; a partition of a topic that no longer exists is dropped (Kafka's rule for deleted topics);
NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS*, REQUEST_TIMED_OUT, a leaderless
partition or a lost connection are retried after ``RETRY_BACKOFF_S`` against the leader the metadata names
then; INVALID_PRODUCER_EPOCH and TRANSACTION_COORDINATOR_FENCED mean a newer coordinator or epoch took
over: the partition is dropped with a warning (Kafka stops there too). It returns when no partition is left,
or raises ``asyncio.CancelledError`` when cancelled (the coordinator lost the partition or stops).

One connection per leader broker, shared by all transactions, re-opened after a failure, to the leader's
endpoint for the inter-broker listener with its client security (``inter_broker``, an
``InterBrokerClient``; PLAINTEXT by default, the broker sets its own at start-up). Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from broker.security.inter_broker import InterBrokerClient, InterBrokerConnections
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

if TYPE_CHECKING:
    from broker.metadata.cache import MetadataCache

log = logging.getLogger("kafkalog.coordinator")

RETRY_BACKOFF_S = 0.1
REQUEST_TIMEOUT_S = 30.0
_DROP = {ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED}


class TxnMarkerSender:
    def __init__(self, broker_id: int, metadata: MetadataCache, inter_broker: InterBrokerClient | None = None) -> None:
        self.broker_id = broker_id
        self.metadata = metadata
        self.inter_broker = inter_broker if inter_broker is not None else InterBrokerClient("PLAINTEXT")
        self._peers = InterBrokerConnections(
            lambda: self.inter_broker, lambda node: self.metadata.brokers.get(node), f"broker-{broker_id}-txn-markers"
        )

    async def close(self) -> None:
        await self._peers.close()

    async def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        partitions: set[tuple[str, int]],
    ) -> None:
        remaining = set(partitions)
        while remaining:
            by_leader: dict[int, list[tuple[str, int]]] = {}
            for tp in sorted(remaining):
                topic = self.metadata.topics.get(tp[0])
                if topic is None or tp[1] not in topic.replicas:
                    log.info("transaction markers: %s-%d no longer exists, skipped", *tp)
                    remaining.discard(tp)
                    continue
                leader = topic.leader(tp[1])
                if leader >= 0 and leader in self.metadata.brokers:
                    by_leader.setdefault(leader, []).append(tp)
            if by_leader:
                results = await asyncio.gather(
                    *(
                        self._send(leader, producer_id, producer_epoch, commit, coordinator_epoch, tps)
                        for leader, tps in by_leader.items()
                    )
                )
                for done in results:
                    remaining -= done
            if remaining:
                await asyncio.sleep(RETRY_BACKOFF_S)

    async def _send(
        self, leader: int, pid: int, epoch: int, commit: bool, coordinator_epoch: int, tps: list[tuple[str, int]]
    ) -> set[tuple[str, int]]:
        """The partitions of ``tps`` that are finished (written, or dropped for good)."""
        Req = API_BY_KEY[ApiKey.WRITE_TXN_MARKERS].Request
        Marker = Req.WritableTxnMarker
        topics: dict[str, list[int]] = {}
        for t, p in tps:
            topics.setdefault(t, []).append(p)
        request = Req(
            markers=[
                Marker(
                    producer_id=pid,
                    producer_epoch=epoch,
                    transaction_result=commit,
                    topics=[
                        Marker.WritableTxnMarkerTopic(name=t, partition_indexes=sorted(ps))
                        for t, ps in sorted(topics.items())
                    ],
                    coordinator_epoch=coordinator_epoch,
                )
            ]
        )
        try:
            conn = await self._peers.get(leader)
            response = await conn.request(ApiKey.WRITE_TXN_MARKERS, request, timeout=REQUEST_TIMEOUT_S)
        except (KafkaClientError, OSError, TimeoutError) as e:
            log.info("transaction markers to broker %d failed (%s); retrying", leader, e)
            await self._peers.drop(leader)
            return set()
        done: set[tuple[str, int]] = set()
        for marker in response.markers:
            for t in marker.topics:
                for p in t.partitions:
                    code = p.error_code
                    tp = (t.name, p.partition_index)
                    if code == ErrorCode.NONE:
                        done.add(tp)
                    elif code in _DROP:
                        log.warning(
                            "transaction markers: %s-%d refused %s for producer %d", *tp, ErrorCode(code).name, pid
                        )
                        done.add(tp)
                    else:
                        log.debug("transaction markers: %s-%d answered %s; retrying", *tp, ErrorCode(code).name)
        return done

    async def drop_connection(self, node: int) -> None:
        """Close the connection to ``node`` after a failure (the next request opens a new one)."""
        await self._peers.drop(node)

    async def connection(self, node: int) -> AsyncKafkaConnection:
        """The shared connection to broker ``node`` (also used by ``txn_verification``)."""
        return await self._peers.get(node)
