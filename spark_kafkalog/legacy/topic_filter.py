"""Topic filters of ``ConsumerConnector.create_message_streams_by_filter`` (Kafka 0.8's ``TopicFilter``).

A filter holds a Java-style regular expression matched against the whole topic name (Java's
``String.matches``, Python's ``re.fullmatch``). As in 0.8 the raw text is trimmed, spaces are removed, quotes
at either end are dropped and commas mean alternation: ``Whitelist("a,b")`` allows topics ``a`` and ``b``.
Internal topics (``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``) are never allowed while
``exclude.internal.topics`` is true (the default), for a whitelist and a blacklist alike. Immutable.
"""

from __future__ import annotations

import re

__all__ = ["INTERNAL_TOPICS", "Blacklist", "TopicFilter", "Whitelist"]

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


class TopicFilter:
    """Base of ``Whitelist`` and ``Blacklist``; ``pattern`` is the name written into the consumer's ids znode."""

    pattern = ""

    def __init__(self, raw_regex: str) -> None:
        regex = raw_regex.strip().replace(",", "|").replace(" ", "")
        regex = re.sub(r"""^["']+""", "", regex)
        regex = re.sub(r"""["']+$""", "", regex)
        try:
            self._compiled = re.compile(regex)
        except re.error as e:
            raise ValueError(f"{raw_regex!r} is an invalid regex: {e}") from None
        self.raw_regex = raw_regex
        self.regex = regex

    def matches(self, topic: str) -> bool:
        return self._compiled.fullmatch(topic) is not None

    def is_topic_allowed(self, topic: str, exclude_internal_topics: bool = True) -> bool:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.regex!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.regex == self.regex

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.regex))


class Whitelist(TopicFilter):
    """Allows the topics the regex matches."""

    pattern = "white_list"

    def is_topic_allowed(self, topic: str, exclude_internal_topics: bool = True) -> bool:
        if exclude_internal_topics and topic in INTERNAL_TOPICS:
            return False
        return self.matches(topic)


class Blacklist(TopicFilter):
    """Allows the topics the regex does not match."""

    pattern = "black_list"

    def is_topic_allowed(self, topic: str, exclude_internal_topics: bool = True) -> bool:
        if exclude_internal_topics and topic in INTERNAL_TOPICS:
            return False
        return not self.matches(topic)


def filter_from_registration(pattern: str, regex: str) -> TopicFilter:
    """The filter another consumer registered (``pattern`` ``white_list`` or ``black_list``)."""
    if pattern == Whitelist.pattern:
        return Whitelist(regex)
    if pattern == Blacklist.pattern:
        return Blacklist(regex)
    raise ValueError(f"unknown topic filter pattern {pattern!r} (expected white_list or black_list)")
