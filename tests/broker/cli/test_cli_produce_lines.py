"""``kafkalog produce`` line parsing: Kafka's console-producer ``LineMessageReader`` properties."""

from __future__ import annotations

import pytest

from broker.cli.produce import Line, LineError, LineReader


def reader(*props: str, key_separator: str | None = None) -> LineReader:
    return LineReader.from_properties(props, key_separator)


def test_by_default_the_whole_line_is_the_value():
    assert reader().read(1, "a\tb:c") == Line(None, b"a\tb:c", [])


def test_parse_key_splits_at_the_first_key_separator():
    assert reader("parse.key=true").read(1, "k\tv\tw") == Line(b"k", b"v\tw", [])
    assert reader("parse.key=true", "key.separator=::").read(1, "k::v::w") == Line(b"k", b"v::w", [])
    assert reader("parse.key=true", "key.separator=:").read(1, ":v") == Line(b"", b"v", [])


def test_headers_come_first_then_the_key_with_the_same_default_tab():
    r = reader("parse.headers=true", "parse.key=true")
    assert r.read(1, "h1:a,h2:b:c\tk\tv") == Line(b"k", b"v", [("h1", b"a"), ("h2", b"b:c")])
    assert reader("parse.headers=true").read(1, "h:x\tval") == Line(None, b"val", [("h", b"x")])


def test_null_marker_nulls_keys_values_headers_and_header_values():
    r = reader("parse.headers=true", "parse.key=true", "null.marker=~")
    assert r.read(1, "~\t~\t~") == Line(None, None, [])
    assert r.read(2, "h:~\tk\tv") == Line(b"k", b"v", [("h", None)])
    with pytest.raises(LineError, match="header name on line 3 equals null.marker '~'"):
        r.read(3, "~:x\tk\tv")


def test_a_missing_separator_stops_unless_ignore_error():
    with pytest.raises(LineError, match=r"no key separator \(':'\) found on line 7: 'novalue'"):
        reader("parse.key=true", "key.separator=:").read(7, "novalue")
    assert reader("parse.key=true", "ignore.error=true").read(1, "novalue") == Line(None, b"novalue", [])
    with pytest.raises(LineError, match=r"no header key separator \(':'\) in 'h' on line 2"):
        reader("parse.headers=true").read(2, "h\tv")
    assert reader("parse.headers=true", "ignore.error=true").read(2, "h\tv") == Line(None, b"v", [("h", None)])


def test_kafkalogs_key_separator_flag_is_lenient_parse_key():
    assert reader(key_separator=":").read(1, "k:v") == Line(b"k", b"v", [])
    assert reader(key_separator=":").read(1, "no key") == Line(None, b"no key", [])


def test_bytes_that_are_not_utf8_are_sent_as_they_were():
    line = b"k\xff:v\xfe".decode(errors="surrogateescape")
    assert reader(key_separator=":").read(1, line) == Line(b"k\xff", b"v\xfe", [])


@pytest.mark.parametrize(
    "props, problem",
    [
        (["parse.key=yes"], "parse.key must be true or false"),
        (["print.key=true"], "unknown --property 'print.key'"),
        (["key.separator="], "key.separator must not be empty"),
        (["headers.delimiter=,"], "headers.delimiter and headers.separator may not be equal"),
        (["headers.key.separator=\\t"], "headers.delimiter and headers.key.separator may not be equal"),
        (["null.marker=\\t"], "null.marker and key.separator may not be equal"),
        (["parse.key"], "--property expects key=value"),
    ],
)
def test_bad_properties_name_the_problem(props, problem):
    with pytest.raises(LineError, match=problem):
        reader(*props)
