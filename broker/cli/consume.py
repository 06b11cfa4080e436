"""``kafkalog consume``: Kafka's ``kafka-console-consumer.sh`` (with kcat's ``-f`` format) for kafkalog.

Follows the topic until Ctrl-C (SIGINT or SIGTERM; exit 130), ``--max-messages`` (exit 0) or ``--timeout-ms``
without a record (exit 0; a group member counts idle time only while it has partitions). Records of
all partitions are printed interleaved in the order they arrive. Where it starts:

- default: the end of every partition (only new records), as Kafka's console consumer does;
- ``--from-beginning``: the log start of every partition;
- ``--partition P [--offset earliest|latest|N]``: one partition (``--offset`` defaults to latest, or earliest
  with ``--from-beginning``); an offset beyond the log resets to latest (earliest with ``--from-beginning``);
- ``--group G``: a member of consumer group G (partitions shared with its other members), starting at the
  group's committed offsets, else at the end (``--from-beginning``: the log start); what is printed is
  committed after every poll, and on exit the position of every assigned partition is committed, also of
  those it read nothing from (as Kafka's console consumer does on close).

Output, as Kafka's DefaultMessageFormatter: the value only by default; ``--property print.timestamp=true``
(``CreateTime:<ms>``, ``LogAppendTime:<ms>`` or ``NO_TIMESTAMP``), ``print.partition`` (``Partition:<p>``),
``print.offset`` (``Offset:<o>``), ``print.headers`` (``k:v,k:v`` or ``NO_HEADERS``), ``print.key``,
``print.value`` (default true), in that order, separated by ``key.separator`` (default tab), each record ended
by ``line.separator`` (default newline); ``headers.separator`` (``,``), ``headers.key.separator`` (``:``) and
``null.literal`` (``null``) as in Kafka. ``--format`` instead takes kcat's tokens (``%t`` topic, ``%p`` partition,
``%o`` offset, ``%k`` key, ``%s`` value, ``%T`` timestamp, ``%h`` headers, ``%K``/``%S`` key/value length (-1 when
null), ``%%``, ``\\n``, ``\\t``; no newline is added, as with kcat). Keys, values and headers are printed as UTF-8 (invalid bytes replaced).
The stderr summary is Kafka's ``Processed a total of N messages``.

Without ``--group``, the partitions are those the topic has at start-up; partitions added later are not read.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

FORMAT_TOKENS = {
    "t": "topic",
    "p": "partition",
    "o": "offset",
    "k": "key (empty when null)",
    "s": "value (empty when null)",
    "T": "timestamp in ms (-1 when none)",
    "h": "headers, name=value comma-separated",
    "K": "key length (-1 when null)",
    "S": "value length (-1 when null)",
}
FORMAT_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}

BOOLEAN_PROPERTIES = ("print.timestamp", "print.partition", "print.offset", "print.headers", "print.key", "print.value")
TEXT_PROPERTIES = {
    "key.separator": "\t",
    "line.separator": "\n",
    "headers.separator": ",",
    "headers.key.separator": ":",
    "null.literal": "null",
}

Formatter = Callable[[Any], str]


class FormatError(ValueError):
    """A ``--format`` or ``--property`` the consumer cannot apply; the message names it."""


def add_parser(sub: Any) -> None:
    co = sub.add_parser(
        "consume",
        help="print records as they arrive (kafka-console-consumer); Ctrl-C to stop",
        description=__doc__.split("\n\n", 1)[1].replace("``", "") if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    co.add_argument("--bootstrap-server", required=True)
    co.add_argument("--topic", required=True)
    co.add_argument("--partition", type=int, default=None, help="read only this partition")
    co.add_argument("--offset", default=None, help="with --partition: earliest, latest or an offset (default latest)")
    co.add_argument("--from-beginning", action="store_true", help="start at the log start (a group: when no commit)")
    co.add_argument("--group", default=None, help="consume as a member of this consumer group, committing offsets")
    co.add_argument("--max-messages", type=int, default=None, help="exit after printing this many records")
    co.add_argument("--timeout-ms", type=int, default=None, help="exit after this long without a record")
    co.add_argument("--isolation-level", default="read_uncommitted", choices=("read_uncommitted", "read_committed"))
    co.add_argument(
        "--property",
        action="append",
        metavar="KEY=VALUE",
        help="formatter property (repeatable): print.key=true, print.timestamp=true, key.separator=..., ...",
    )
    co.add_argument(
        "--format", default=None, help="kcat-like format, e.g. '%%t %%p %%o %%k %%s\\n' (not with --property)"
    )
    co.set_defaults(func=cmd_consume)


def usage_error(args: argparse.Namespace) -> str | None:
    if args.group is not None and (args.offset is not None or args.partition is not None):
        return "consume --group takes its partitions from the group; it cannot be combined with --partition or --offset"
    if args.partition is not None and args.partition < 0:
        return f"--partition must be 0 or more, not {args.partition}"
    if args.offset is not None:
        if args.partition is None:
            return "consume --offset needs --partition (an offset belongs to one partition)"
        if parse_offset(args.offset) is None:
            return f"consume --offset must be earliest, latest or an offset of 0 or more, not {args.offset!r}"
        if args.from_beginning:
            return "consume --offset cannot be combined with --from-beginning"
    if args.max_messages is not None and args.max_messages < 1:
        return f"--max-messages must be 1 or more, not {args.max_messages}"
    if args.timeout_ms is not None and args.timeout_ms < 0:
        return f"--timeout-ms must be 0 or more, not {args.timeout_ms}"
    if args.format is not None and args.property:
        return "consume --format and --property are alternatives; use one"
    try:
        make_formatter(args.format, args.property or ())
    except FormatError as e:
        return str(e)
    return None


def parse_offset(text: str) -> int | None:
    """``earliest`` -> -2, ``latest`` -> -1, a non-negative integer -> itself, else ``None``."""
    text = text.strip().lower()
    if text in ("earliest", "latest"):
        return -2 if text == "earliest" else -1
    return int(text) if text.isdigit() else None


def _text(data: bytes | None, null: str) -> str:
    return null if data is None else bytes(data).decode(errors="replace")


def make_formatter(fmt: str | None, properties: Any) -> Formatter:
    """A function from a ``ConsumerRecord`` to its printed text (line end included); raises ``FormatError``."""
    if fmt is not None:
        return _kcat_formatter(fmt)
    return _kafka_formatter(properties)


def _kafka_formatter(properties: Any) -> Formatter:
    flags = {"print.value": True}
    text = dict(TEXT_PROPERTIES)
    for item in properties:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise FormatError(f"--property expects key=value, got {item!r}")
        if key in BOOLEAN_PROPERTIES:
            if value.strip().lower() not in ("true", "false"):
                raise FormatError(f"--property {key} must be true or false, not {value!r}")
            flags[key] = value.strip().lower() == "true"
        elif key in text:
            text[key] = value.encode().decode("unicode_escape")  # key.separator=\t as typed in a shell
        else:
            raise FormatError(
                f"unknown --property {key!r}; known: {', '.join(BOOLEAN_PROPERTIES + tuple(TEXT_PROPERTIES))}"
            )
    sep, null = text["key.separator"], text["null.literal"]
    hsep, hkey = text["headers.separator"], text["headers.key.separator"]
    fields: list[Callable[[Any], str]] = []
    if flags.get("print.timestamp"):
        fields.append(
            lambda r: (
                "NO_TIMESTAMP"
                if r.timestamp_type < 0 or r.timestamp < 0
                else f"{'LogAppendTime' if r.timestamp_type == 1 else 'CreateTime'}:{r.timestamp}"
            )
        )
    if flags.get("print.partition"):
        fields.append(lambda r: f"Partition:{r.partition}")
    if flags.get("print.offset"):
        fields.append(lambda r: f"Offset:{r.offset}")
    if flags.get("print.headers"):
        fields.append(
            lambda r: hsep.join(f"{k}{hkey}{_text(v, null)}" for k, v in r.headers) if r.headers else "NO_HEADERS"
        )
    if flags.get("print.key"):
        fields.append(lambda r: _text(r.key, null))
    if flags.get("print.value"):
        fields.append(lambda r: _text(r.value, null))
    end = text["line.separator"]
    return lambda r: sep.join(f(r) for f in fields) + end


def _kcat_formatter(fmt: str) -> Formatter:
    parts: list[Callable[[Any], str] | str] = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        nxt = fmt[i + 1] if i + 1 < len(fmt) else ""
        if c == "%":
            if nxt == "%":
                parts.append("%")
            elif nxt in FORMAT_TOKENS:
                parts.append(_TOKEN_FUNCS[nxt])
            else:
                known = ", ".join(f"%{t} {d}" for t, d in FORMAT_TOKENS.items())
                raise FormatError(f"--format: unknown token %{nxt} at position {i}; known: {known}")
            i += 2
        elif c == "\\" and nxt in FORMAT_ESCAPES:
            parts.append(FORMAT_ESCAPES[nxt])
            i += 2
        else:
            parts.append(c)
            i += 1
    return lambda r: "".join(p if isinstance(p, str) else p(r) for p in parts)


_TOKEN_FUNCS: dict[str, Callable[[Any], str]] = {
    "t": lambda r: r.topic,
    "p": lambda r: str(r.partition),
    "o": lambda r: str(r.offset),
    "k": lambda r: _text(r.key, ""),
    "s": lambda r: _text(r.value, ""),
    "T": lambda r: str(r.timestamp),
    "h": lambda r: ",".join(f"{k}={_text(v, '')}" for k, v in r.headers),
    "K": lambda r: str(-1 if r.key is None else len(r.key)),
    "S": lambda r: str(-1 if r.value is None else len(r.value)),
}


def cmd_consume(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import Consumer, KafkaClientError, TopicPartition

    formatter = make_formatter(args.format, args.property or ())
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    shown = 0
    out = sys.stdout
    try:
        group = {} if args.group is None else {"group_id": args.group}
        with Consumer(
            args.bootstrap_server,
            **group,
            auto_offset_reset="earliest" if args.from_beginning else "latest",
            enable_auto_commit=False,
            isolation_level=args.isolation_level,
        ) as consumer:
            if args.group is not None:
                consumer.subscribe([args.topic])
            else:
                _assign(consumer, args, TopicPartition)
            last_record = time.monotonic()
            while not stop.is_set():
                limit = None if args.max_messages is None else args.max_messages - shown
                records = consumer.poll(timeout_ms=200, max_records=limit)
                printed: dict[Any, int] = {}
                for rec in records:
                    out.write(formatter(rec))
                    printed[TopicPartition(rec.topic, rec.partition)] = rec.offset + 1
                    shown += 1
                if records:
                    out.flush()
                    last_record = time.monotonic()
                if printed and args.group is not None:
                    consumer.commit(printed)
                if args.max_messages is not None and shown >= args.max_messages:
                    break
                if not consumer.assignment():
                    last_record = time.monotonic()  # a member's idle time counts while it has partitions
                if args.timeout_ms is not None and (time.monotonic() - last_record) * 1000 >= args.timeout_ms:
                    break
            if args.group is not None:
                _commit_positions(consumer)
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print(f"Processed a total of {shown} messages", file=sys.stderr)
    return 130 if stop.is_set() else 0


def _commit_positions(consumer: Any) -> None:
    """Commit the position of every assigned partition, read or not, as Kafka's console consumer does on
    close: a run that read nothing still records where it stood, so the next run of the group starts there
    (with ``latest``, records produced in between would otherwise be skipped)."""
    positions = {tp: consumer.position(tp) for tp in consumer.assignment()}
    if positions:
        consumer.commit(positions)


def _assign(consumer: Any, args: argparse.Namespace, TopicPartition: Any) -> None:
    client = consumer.client
    if args.partition is not None:
        parts = client.partitions_for(args.topic)
        if args.partition not in parts:
            from spark_kafkalog.client import KafkaClientError

            raise KafkaClientError(
                f"topic {args.topic} has no partition {args.partition} (partitions 0-{max(parts)})", retriable=False
            )
        tps = [TopicPartition(args.topic, args.partition)]
    else:
        tps = [TopicPartition(args.topic, p) for p in sorted(client.partitions_for(args.topic))]
    consumer.assign(tps)
    offset = parse_offset(args.offset) if args.offset is not None else (-2 if args.from_beginning else -1)
    if offset == -2:
        consumer.seek_to_beginning(tps)
    elif offset == -1:
        consumer.seek_to_end(tps)
    else:
        for tp in tps:
            consumer.seek(tp, offset)
