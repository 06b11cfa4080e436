"""Kafka's topic-name rule, the one validator used by the broker (CreateTopics, Metadata auto-creation, the
cluster registry, the log manager) and available to clients.

A legal name (``org.apache.kafka.common.internals.Topic.validate``) is 1 to 249 characters, each an ASCII
letter, digit, ``.``, ``_`` or ``-``, and is neither ``.`` nor ``..``. The whole string must match: a
trailing newline or any other character outside the set makes the name illegal. 249 is the longest name
whose partition directory ``<name>-<partition>`` and deletion rename still fit a 255-byte file name.
"""

from __future__ import annotations

import re

__all__ = ["MAX_TOPIC_NAME_LENGTH", "InvalidTopicNameError", "topic_name_problem", "validate_topic_name"]

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_CHARACTERS = re.compile(r"[a-zA-Z0-9._-]+")


class InvalidTopicNameError(ValueError):
    """A topic name that breaks Kafka's rule; the message names the name and what is wrong with it."""

    def __init__(self, name: object, problem: str) -> None:
        super().__init__(f"invalid topic name {name!r}: {problem}")
        self.name = name
        self.problem = problem


def topic_name_problem(name: object) -> str | None:
    """What makes ``name`` illegal (one phrase), or None when it is a legal topic name."""
    if not isinstance(name, str):
        return f"a topic name is a string, not {type(name).__name__}"
    if not name:
        return "the name is empty"
    if name in (".", ".."):
        return f"{name!r} is not allowed"
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return f"{len(name)} characters long; the limit is {MAX_TOPIC_NAME_LENGTH}"
    if not _LEGAL_CHARACTERS.fullmatch(name):
        return "only ASCII letters, digits, '.', '_' and '-' are allowed"
    return None


def validate_topic_name(name: object) -> str:
    """Return ``name`` when it is legal; raise ``InvalidTopicNameError`` (a ``ValueError``) otherwise."""
    problem = topic_name_problem(name)
    if problem is not None:
        raise InvalidTopicNameError(name, problem)
    return name  # type: ignore[return-value]
