"""kafkalog's share consumer (KIP-932 share groups): ``ShareConsumer`` and ``AcknowledgeType``.

The parts: ``membership`` (ShareGroupHeartbeat, sans-IO), ``acknowledgements`` (what is owed to the broker per
record, sans-IO), ``session`` (share session epochs per leader broker, sans-IO), ``fetched`` (acquired records of a
ShareFetch answer), ``requests`` (the wire requests), ``heartbeat`` (the heartbeat thread), ``share_fetcher``
(ShareFetch/ShareAcknowledge with the leaders), ``settings`` (the acknowledgement mode, refused settings) and
``consumer`` (the blocking ``ShareConsumer``). docs/share-groups.md describes the consumer.
"""

from spark_kafkalog.client.share.acknowledgements import AcknowledgeType
from spark_kafkalog.client.share.consumer import AcknowledgementCommitCallback, ShareConsumer

__all__ = ["AcknowledgeType", "AcknowledgementCommitCallback", "ShareConsumer"]
