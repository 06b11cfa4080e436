"""The one topic-name validator: Kafka's rule, matched against the whole string."""

from __future__ import annotations

import pytest

from spark_kafkalog.protocol.topic_name import (
    MAX_TOPIC_NAME_LENGTH,
    InvalidTopicNameError,
    topic_name_problem,
    validate_topic_name,
)


@pytest.mark.parametrize("name", ["a", "orders", "my.topic_v2-final", "__consumer_offsets", "x" * 249, "...", "9"])
def test_legal_names_pass(name):
    assert topic_name_problem(name) is None
    assert validate_topic_name(name) == name


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("", "empty"),
        (".", "not allowed"),
        ("..", "not allowed"),
        ("x" * 250, "250 characters long; the limit is 249"),
        ("a/b", "only ASCII letters"),
        ("orders\n", "only ASCII letters"),  # a `^...$` + match() validator accepted this
        ("\norders", "only ASCII letters"),
        ("caf\u00e9", "only ASCII letters"),
        ("two words", "only ASCII letters"),
        ("\u0661\u0662", "only ASCII letters"),  # Unicode digits are not [0-9]
        (None, "a topic name is a string"),
    ],
)
def test_illegal_names_are_refused_with_the_reason(name, fragment):
    assert fragment in topic_name_problem(name)
    with pytest.raises(InvalidTopicNameError) as e:
        validate_topic_name(name)
    assert isinstance(e.value, ValueError) and fragment in str(e.value) and repr(name) in str(e.value)


def test_the_limit_is_kafkas():
    assert MAX_TOPIC_NAME_LENGTH == 249
