"""``kafkalog consume`` output formats: Kafka's console-consumer properties and kcat's ``--format`` tokens."""

from __future__ import annotations

import pytest

from broker.cli.consume import FormatError, make_formatter, parse_offset
from spark_kafkalog.client import ConsumerRecord

RECORD = ConsumerRecord("t", 2, 41, 1_700_000_000_000, 1, b"key", b"\xffval", [("a", b"1"), ("b", None)])
BARE = ConsumerRecord("t", 0, 0, -1, -1, None, None, [])


def test_kafka_default_is_the_value_and_a_newline():
    assert make_formatter(None, [])(RECORD) == "\ufffdval\n"  # undecodable bytes replaced
    assert make_formatter(None, [])(BARE) == "null\n"


def test_kafka_properties_print_fields_in_kafkas_order_with_its_separators():
    props = [
        "print.key=true",
        "print.headers=true",
        "print.offset=true",
        "print.partition=true",
        "print.timestamp=true",
        "key.separator= | ",
        "line.separator=\\r\\n",
        "headers.separator=;",
        "headers.key.separator==",
        "null.literal=NULL",
    ]
    fmt = make_formatter(None, props)
    assert fmt(RECORD) == "LogAppendTime:1700000000000 | Partition:2 | Offset:41 | a=1;b=NULL | key | \ufffdval\r\n"
    assert fmt(BARE) == "NO_TIMESTAMP | Partition:0 | Offset:0 | NO_HEADERS | NULL | NULL\r\n"
    assert make_formatter(None, ["print.key=true", "print.value=false"])(RECORD) == "key\n"


def test_kcat_tokens_and_escapes():
    fmt = make_formatter("%t/%p/%o %T %k=%s (%K,%S) [%h] 100%%\\t\\n", [])
    assert fmt(RECORD) == "t/2/41 1700000000000 key=\ufffdval (3,4) [a=1,b=] 100%\t\n"
    assert fmt(BARE) == "t/0/0 -1 = (-1,-1) [] 100%\t\n"


@pytest.mark.parametrize(
    ("fmt", "props", "problem"),
    [
        ("%q", [], "unknown token %q at position 0"),
        ("ends with %", [], "unknown token % at position 10"),
        (None, ["print.key"], "--property expects key=value"),
        (None, ["print.key=1"], "print.key must be true or false"),
        (None, ["deserializer=x"], "unknown --property 'deserializer'"),
    ],
)
def test_mistakes_name_what_is_wrong(fmt, props, problem):
    with pytest.raises(FormatError, match=problem):
        make_formatter(fmt, props)


def test_offsets_parse_as_kafkas_console_consumer_does():
    assert [parse_offset(t) for t in ("earliest", "LATEST", "0", "17", "-1", "x")] == [-2, -1, 0, 17, None, None]
