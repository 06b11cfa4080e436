"""``kafkalog produce``: Kafka's ``kafka-console-producer.sh`` for kafkalog: one record per line of stdin.

Each line is read as Kafka's ``LineMessageReader`` reads it, set with ``--property``:

- ``parse.key=true``: the key is the text before ``key.separator`` (default tab), the value the rest;
- ``parse.headers=true``: the line starts with headers ended by ``headers.delimiter`` (default tab), pairs
  separated by ``headers.separator`` (``,``), each ``name`` ``headers.key.separator`` (``:``) ``value``; so
  ``h1:v1,h2:v2<TAB>key<TAB>value`` with both;
- ``null.marker=S``: a key, value or header value equal to S is null (a header name may not be S);
- ``ignore.error=true``: a line without the key separator (or the headers delimiter) is sent with a null key
  (no headers) instead of stopping, and a header without its key separator gets a null value.

Without ``ignore.error``, a line that lacks a separator stops the producer with one line naming its number
(what was read before it is still sent). ``--key-separator S`` (kafkalog's older flag) is ``parse.key=true
key.separator=S ignore.error=true``. ``--compression-codec [C]`` (gzip when given without a value) is
``--compression C``; ``--request-required-acks`` is ``--acks``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

BOOLEAN_PROPERTIES = ("parse.key", "parse.headers", "ignore.error")
TEXT_PROPERTIES = {
    "key.separator": "\t",
    "headers.delimiter": "\t",
    "headers.separator": ",",
    "headers.key.separator": ":",
    "null.marker": None,
}
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


class LineError(ValueError):
    """A line (or a ``--property``) the reader cannot turn into a record; the message names it."""


class Line(NamedTuple):
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]


@dataclass(frozen=True)
class LineReader:
    """Kafka's ``LineMessageReader`` rules (see the module docstring); ``read(n, text)`` splits line ``n``."""

    parse_key: bool = False
    parse_headers: bool = False
    ignore_error: bool = False
    key_separator: str = "\t"
    headers_delimiter: str = "\t"
    headers_separator: str = ","
    headers_key_separator: str = ":"
    null_marker: str | None = None

    @classmethod
    def from_properties(cls, properties: Iterable[str], key_separator: str | None = None) -> LineReader:
        """From ``--property k=v`` items (and kafkalog's ``--key-separator``); raises ``LineError``."""
        flags: dict[str, bool] = {}
        text: dict[str, str | None] = {}
        if key_separator is not None:
            flags.update({"parse.key": True, "ignore.error": True})
            text["key.separator"] = key_separator
        for item in properties:
            name, sep, value = item.partition("=")
            name = name.strip()
            if not sep:
                raise LineError(f"--property expects key=value, got {item!r}")
            if name in BOOLEAN_PROPERTIES:
                if value.strip().lower() not in ("true", "false"):
                    raise LineError(f"--property {name} must be true or false, not {value!r}")
                flags[name] = value.strip().lower() == "true"
            elif name in TEXT_PROPERTIES:
                if not value and name != "null.marker":
                    raise LineError(f"--property {name} must not be empty")
                text[name] = value.encode().decode("unicode_escape")  # key.separator=\t as typed in a shell
            else:
                known = ", ".join(BOOLEAN_PROPERTIES + tuple(TEXT_PROPERTIES))
                raise LineError(f"unknown --property {name!r}; known: {known}")
        separators: dict[str, Any] = {
            field.replace(".", "_"): text.get(field, default)
            for field, default in TEXT_PROPERTIES.items()
            if field in text or default is not None
        }
        reader = cls(
            parse_key=flags.get("parse.key", False),
            parse_headers=flags.get("parse.headers", False),
            ignore_error=flags.get("ignore.error", False),
            **separators,
        )
        reader._check()
        return reader

    def _check(self) -> None:
        """Kafka's checks: the header separators differ from each other, and none is the null marker."""
        pairs = [
            ("headers.delimiter", self.headers_delimiter, "headers.separator", self.headers_separator),
            ("headers.delimiter", self.headers_delimiter, "headers.key.separator", self.headers_key_separator),
            ("headers.separator", self.headers_separator, "headers.key.separator", self.headers_key_separator),
        ]
        if self.null_marker is not None:
            for name in ("key.separator", "headers.separator", "headers.delimiter", "headers.key.separator"):
                pairs.append(("null.marker", self.null_marker, name, getattr(self, name.replace(".", "_"))))
        for name_a, a, name_b, b in pairs:
            if a == b:
                raise LineError(f"--property {name_a} and {name_b} may not be equal (both {a!r})")

    def _split(self, n: int, line: str, start: int, separator: str, what: str) -> str | None:
        index = line.find(separator, start)
        if index < 0:
            if self.ignore_error:
                return None
            raise LineError(f"no {what} ({separator!r}) found on line {n}: {line!r}")
        return line[start:index]

    def read(self, n: int, line: str) -> Line:
        headers_text = (
            self._split(n, line, 0, self.headers_delimiter, "headers delimiter") if self.parse_headers else None
        )
        offset = 0 if headers_text is None else len(headers_text) + len(self.headers_delimiter)
        key = self._split(n, line, offset, self.key_separator, "key separator") if self.parse_key else None
        offset += 0 if key is None else len(key) + len(self.key_separator)
        value = line[offset:]
        headers = [] if headers_text is None or headers_text == self.null_marker else self._headers(n, headers_text)
        return Line(self._bytes(key), self._bytes(value), headers)

    def _bytes(self, text: str | None) -> bytes | None:
        """UTF-8 of ``text``; bytes of stdin that were not UTF-8 (carried as surrogates) come back as they were."""
        return None if text is None or text == self.null_marker else text.encode(errors="surrogateescape")

    def _headers(self, n: int, text: str) -> list[tuple[str, bytes | None]]:
        out: list[tuple[str, bytes | None]] = []
        for pair in text.split(self.headers_separator):
            name, sep, value = pair.partition(self.headers_key_separator)
            if not sep:
                if not self.ignore_error:
                    raise LineError(f"no header key separator ({self.headers_key_separator!r}) in {pair!r} on line {n}")
                out.append((pair, None))
                continue
            if name == self.null_marker:
                raise LineError(
                    f"header name on line {n} equals null.marker {self.null_marker!r}; names cannot be null"
                )
            out.append((name.encode(errors="surrogateescape").decode(errors="replace"), self._bytes(value)))
        return out


def add_parser(sub: Any) -> None:
    pr = sub.add_parser(
        "produce",
        help="send lines from stdin as records (kafka-console-producer)",
        description=__doc__.split("\n\n", 1)[1].replace("``", "") if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pr.add_argument("--bootstrap-server", required=True)
    pr.add_argument("--topic", required=True)
    pr.add_argument("--partition", type=int, default=None)
    pr.add_argument("--key-separator", default=None, help="split each line into key and value at this string")
    pr.add_argument(
        "--property",
        action="append",
        metavar="KEY=VALUE",
        help="line reader property (repeatable): parse.key=true, key.separator=:, parse.headers=true, ...",
    )
    pr.add_argument("--acks", "--request-required-acks", default="1", choices=("0", "1", "all", "-1"))
    pr.add_argument("--compression", "--compression-codec", nargs="?", const="gzip", default="none", choices=CODECS)
    pr.set_defaults(func=cmd_produce)


def usage_error(args: argparse.Namespace) -> str | None:
    try:
        LineReader.from_properties(args.property or (), args.key_separator)
    except LineError as e:
        return str(e)
    return None


def cmd_produce(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import KafkaClientError, Producer

    reader = LineReader.from_properties(args.property or (), args.key_separator)
    sent = 0
    errors: list[BaseException] = []
    stopped: str | None = None

    def on_delivery(_md: Any, exc: BaseException | None) -> None:
        if exc is not None:
            errors.append(exc)

    last = time.monotonic()
    try:
        with Producer(
            args.bootstrap_server, acks=args.acks, compression_type=args.compression, linger_ms=5
        ) as producer:
            for n, raw in enumerate(sys.stdin.buffer, start=1):
                text = raw.rstrip(b"\r\n").decode(errors="surrogateescape")
                try:
                    line = reader.read(n, text)
                except LineError as e:
                    stopped = str(e)
                    break
                producer.send(
                    args.topic,
                    line.value,
                    key=line.key,
                    partition=args.partition,
                    headers=line.headers or None,
                    on_delivery=on_delivery,
                )
                sent += 1
                if time.monotonic() - last >= 1.0:
                    print(f"\rproduced {sent} records", end="", file=sys.stderr, flush=True)
                    last = time.monotonic()
            producer.flush()
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    print(f"\rproduced {sent} records to {args.topic}" + (f", {len(errors)} failed" if errors else ""), file=sys.stderr)
    if stopped is not None:
        print(f"kafkalog: stopped: {stopped}", file=sys.stderr)
        return 1
    if errors:
        print(f"kafkalog: first failure: {errors[0]}", file=sys.stderr)
        return 1
    return 0
