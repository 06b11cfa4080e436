"""How fast a follower, and the consumers reading from it (KIP-392), learn a new high watermark: a leader
answers a follower's long poll at once when the high watermark moved past the one it last sent that follower,
and a follower's new high watermark wakes the consumer long polls on it. Fetch on built services (brokers 0, 1,
2; ``t``-0 led by 0)."""

from __future__ import annotations

import asyncio

import pytest

from broker.handlers import fetch
from spark_kafkalog.protocol import API_BY_KEY

from ..handlers.test_fetch_follower_fetching import follower_with_data, offsets, services_of
from ..log.helpers import value_batch
from ..services_builder import request_context

R = API_BY_KEY[fetch.API_KEY].Request


def body(offset: int, *, replica_id: int = -1, max_wait_ms: int = 5000):
    return R(
        replica_id=replica_id,
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=1 << 20,
        topics=[
            R.FetchTopic(
                topic="t",
                partitions=[R.FetchTopic.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)],
            )
        ],
        forgotten_topics_data=[],
    )


def answer_of(response):
    (topic,) = response.responses
    (p,) = topic.partitions
    return p


@pytest.mark.parametrize(
    "sent, now, news",
    [(-1, 0, True), (0, 0, False), (3, 5, True), (5, 5, False), (5, 4, False)],
)
def test_high_watermark_news_is_a_newer_one_than_last_sent(tmp_path, sent, now, news):
    part = services_of(tmp_path, 0).replica_manager.get_partition("t", 0)
    part.followers[1].last_sent_high_watermark = sent
    assert part.take_high_watermark_news(1, now) is news
    assert part.followers[1].last_sent_high_watermark == max(sent, now)


def test_a_leader_answers_a_waiting_follower_as_soon_as_the_high_watermark_moves(tmp_path):
    services = services_of(tmp_path, 0)
    part = services.replica_manager.get_partition("t", 0)
    part.append_as_leader(value_batch(5), required_acks=1)

    async def scenario():
        ctx = request_context(services, fetch.API_KEY, 12)
        first = answer_of(await asyncio.wait_for(fetch.handle(ctx, body(5, replica_id=1)), 1))
        assert first.high_watermark == 0  # broker 2 has not fetched: nothing is committed yet
        waiting = asyncio.create_task(fetch.handle(ctx, body(5, replica_id=1)))
        await asyncio.sleep(0.1)
        assert not waiting.done()  # no data, no news: a long poll
        part.update_follower_fetch(2, 5, services.replica_manager.now_ms(), 0)  # broker 2 caught up
        assert part.high_watermark == 5
        return answer_of(await asyncio.wait_for(waiting, 1))

    assert asyncio.run(scenario()).high_watermark == 5


def test_a_followers_new_high_watermark_wakes_the_consumers_waiting_on_it(tmp_path):
    services = follower_with_data(tmp_path)  # offsets 0-4, high watermark 3
    part = services.replica_manager.get_partition("t", 0)

    async def scenario():
        ctx = request_context(services, fetch.API_KEY, 11)
        waiting = asyncio.create_task(fetch.handle(ctx, body(3)))
        await asyncio.sleep(0.1)
        assert not waiting.done()
        part.set_follower_high_watermark(5)
        return answer_of(await asyncio.wait_for(waiting, 1))

    answer = asyncio.run(scenario())
    assert (answer.high_watermark, offsets(answer.records)) == (5, [3, 4])
