"""The range assignment of Kafka 0.8's ConsumerConnector (design section 5.6, "consumer rebalancing algorithm").

Pure and deterministic: every consumer of a group computes the same answer from the same ZooKeeper view.
For each topic, the partition ids are sorted numerically and the group's consumer threads sorted as strings
(thread ids are ``<consumer_id>-<i>``, compared as strings as 0.8's ``ConsumerThreadId`` did, so ``c-10`` sorts
before ``c-2``). With ``n`` partitions and ``m`` threads, thread ``i`` gets ``n // m`` consecutive partitions
starting at ``(n // m) * i + min(i, n % m)``, plus one more when ``i < n % m``. The seeds' formula
(``i*N .. (i+1)*N - 1`` with ``N = n / m``) leaves the ``n % m`` last partitions unowned; Kafka 0.8's code
hands them out one each to the first threads, which is what this module does. With more threads than
partitions the last threads get nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["assign_for_consumer", "consumer_thread_ids", "range_assign"]


def consumer_thread_ids(consumer_id: str, topic_count: Mapping[str, int]) -> dict[str, list[str]]:
    """``{topic: ["<consumer_id>-0", ...]}``: one thread id per requested stream of each topic."""
    out = {}
    for topic, n in topic_count.items():
        if n < 1:
            raise ValueError(f"topic {topic!r}: the number of streams must be >= 1, got {n}")
        out[topic] = [f"{consumer_id}-{i}" for i in range(n)]
    return out


def range_assign(partitions: Iterable[int], threads: Iterable[str]) -> dict[str, list[int]]:
    """Every thread's partitions of one topic (threads with none map to ``[]``); see the module docstring."""
    parts = sorted(set(partitions))
    ordered = sorted(set(threads))
    if not ordered:
        return {}
    per_thread, extra = divmod(len(parts), len(ordered))
    out = {}
    for i, thread in enumerate(ordered):
        start = per_thread * i + min(i, extra)
        count = per_thread + (1 if i < extra else 0)
        out[thread] = parts[start : start + count]
    return out


def assign_for_consumer(
    my_threads: Mapping[str, Iterable[str]],
    partitions_per_topic: Mapping[str, Iterable[int]],
    threads_per_topic: Mapping[str, Iterable[str]],
) -> dict[tuple[str, int], str]:
    """``{(topic, partition): thread id}`` of one consumer.

    ``my_threads``: the consumer's own thread ids per topic; ``partitions_per_topic``: the topics' partition
    ids; ``threads_per_topic``: the thread ids of every consumer of the group subscribed to the topic (the
    consumer's own included). A topic without partitions (not created yet) assigns nothing.
    """
    out: dict[tuple[str, int], str] = {}
    for topic, mine in sorted(my_threads.items()):
        mine = set(mine)
        everyone = set(threads_per_topic.get(topic, ())) | mine
        for thread, parts in range_assign(partitions_per_topic.get(topic, ()), everyone).items():
            if thread in mine:
                for p in parts:
                    out[(topic, p)] = thread
    return out
