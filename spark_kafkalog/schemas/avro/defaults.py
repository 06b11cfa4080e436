"""Field defaults as datums: a reader schema for fastavro's resolution whose defaults are the values a
decoded field would have.

fastavro fills a reader field the writer lacks with the default exactly as the schema's JSON spells it:
a ``bytes`` or ``fixed`` default stays a string (Avro's JSON encoding: code points 0-255 are the bytes),
a logical type's default its underlying number or string. Avro Java (and so Spark's ``from_avro``) reads
the default as a datum of the field's type: ``"\\u0000"`` of a ``bytes`` decimal(9, 2) is ``0.00``, ``1`` of a
``date`` is 1970-01-02. ``with_datum_defaults`` gives a copy of a fastavro-parsed schema whose defaults are
those datums (fastavro's Python forms: ``bytes``, ``Decimal``, ``date``, ``datetime``, ``time``; records as
dicts with their own fields' defaults filled in), so resolution yields what Avro Java yields.

Numbers stay as the JSON has them (an integer default of a ``double`` is an int, as the projection gives
it; the Arrow column is float64 either way). A union's default belongs to its first branch (Avro's rule); a null default of a union with null is null.
A default that does not fit its type is left as it is (fastavro then reports or passes it as before).
"""

from __future__ import annotations

import copy
import datetime
import decimal
from typing import Any

from spark_kafkalog.schemas.avro.names import PRIMITIVES

_EPOCH = datetime.datetime(1970, 1, 1)
_UTC_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_TIMESTAMPS = {
    "timestamp-millis": (_UTC_EPOCH, "milliseconds"),
    "timestamp-micros": (_UTC_EPOCH, "microseconds"),
    "local-timestamp-millis": (_EPOCH, "milliseconds"),
    "local-timestamp-micros": (_EPOCH, "microseconds"),
}


def with_datum_defaults(parsed: Any) -> Any:
    """A deep copy of the fastavro-parsed ``parsed`` with every record field's default as a datum."""
    schema = copy.deepcopy(parsed)  # named types stay shared between their uses and "__named_schemas"
    named: dict[str, Any] = schema.get("__named_schemas", {}) if isinstance(schema, dict) else {}
    done: set[int] = set()
    converted: list[tuple[dict[str, Any], Any]] = []  # assigned after the walk: every datum from the JSON

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for branch in node:
                walk(branch)
        elif isinstance(node, dict):
            if node.get("type") in ("record", "error"):
                for field in node.get("fields", ()):
                    if id(field) in done:
                        continue
                    done.add(id(field))
                    if "default" in field:
                        converted.append((field, datum(field["default"], field["type"], named)))
                    walk(field["type"])
            for key in ("items", "values"):
                if key in node:
                    walk(node[key])
            if isinstance(node.get("type"), (dict, list)):
                walk(node["type"])

    walk(schema)
    for definition in named.values():
        walk(definition)
    for field, value in converted:
        field["default"] = value
    return schema


def datum(value: Any, node: Any, named: dict[str, Any]) -> Any:
    """The datum (fastavro's decoded Python form) of a JSON default ``value`` of the type ``node``."""
    try:
        return _datum(value, node, named)
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError, decimal.InvalidOperation):
        return value  # does not fit its type: as fastavro had it


def _bytes(value: Any) -> Any:
    return value.encode("latin-1") if isinstance(value, str) else value


def _datum(value: Any, node: Any, named: dict[str, Any]) -> Any:
    if isinstance(node, str) and node not in PRIMITIVES:
        node = named[node]
    if isinstance(node, list):
        if value is None and "null" in node:
            return None
        return _datum(value, node[0], named)
    if isinstance(node, str):
        if node == "bytes":
            return _bytes(value)
        return value
    kind = node["type"]
    if not isinstance(kind, str) or (
        kind not in PRIMITIVES and kind not in ("record", "error", "enum", "fixed", "array", "map")
    ):
        return _datum(value, kind, named)
    logical = node.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        precision, scale = node.get("precision"), node.get("scale", 0)
        if isinstance(precision, int) and isinstance(scale, int) and 0 <= scale <= precision:
            unscaled = int.from_bytes(_bytes(value), "big", signed=True)
            return decimal.Decimal(unscaled).scaleb(-scale)
    if kind == "int" and logical == "date":
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=value)
    if kind == "int" and logical == "time-millis":
        return (_EPOCH + datetime.timedelta(milliseconds=value)).time()
    if kind == "long" and logical == "time-micros":
        return (_EPOCH + datetime.timedelta(microseconds=value)).time()
    if kind == "long" and logical in _TIMESTAMPS:
        epoch, unit = _TIMESTAMPS[logical]
        return epoch + datetime.timedelta(**{unit: value})
    if kind in ("bytes", "fixed"):
        return _bytes(value)
    if kind in PRIMITIVES:
        return _datum(value, kind, named)
    if kind == "array":
        return [_datum(v, node["items"], named) for v in value]
    if kind == "map":
        return {k: _datum(v, node["values"], named) for k, v in value.items()}
    if kind in ("record", "error"):
        out = {}
        for field in node["fields"]:
            name = field["name"]
            if name in value:
                out[name] = _datum(value[name], field["type"], named)
            elif "default" in field:
                out[name] = _datum(field["default"], field["type"], named)
            else:
                raise KeyError(name)
        return out
    return value  # enum: its symbol
