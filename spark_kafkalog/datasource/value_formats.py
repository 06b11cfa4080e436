"""Decoding and encoding the ``key`` / ``value`` columns in Confluent's wire format (no pyspark).

Reading (``formats.ReadFormats``):

- ``resolve_read_formats`` runs where the read is planned (the driver's planning worker): each formatted
  column's reader schema (``<column>SchemaId``, or the subject's pinned or latest version) is looked up once
  and pinned by id, so every task of the read decodes into the same type even if a version is registered
  meanwhile. ``read_arrow_schema`` is the Arrow schema of the rows: Spark's Kafka columns with ``key`` /
  ``value`` of the reader codec's ``arrow_type`` and, in PERMISSIVE mode, the corrupt-record column
  ``struct<error:string,key:binary,value:binary>`` last.
- ``FormatDecoder.decode(batch)`` runs in the tasks: each framed value is unframed, its writer schema fetched
  by id (cached per process: ``registry_cache``), the payloads of one writer schema decoded together with
  ``ValueCodec.decode_many`` and the column built with ``pa.array(values, type=codec.arrow_type)``. A null
  key or value (a tombstone) stays null. When every present value of a batch's column is framed with one
  schema id and the codec has a compiled decoder (``AvroCodec.decode_arrow``: the reader's own schema, C
  kernel ``spark_kafkalog._kernels``) that decodes every payload, the column is built by it in one step
  instead (the same array, no Python value per record); anything else takes the path above, which also
  explains every failure. A record that cannot be decoded (not in the wire format, an unknown
  schema id, a writer schema of another type or one the reader cannot read, a payload that does not parse)
  raises ``RecordDecodeError`` naming topic, partition, offset and schema id in FAILFAST mode; in PERMISSIVE
  mode its decoded column is null and the corrupt-record column holds the error and the record's raw key and
  value (null for good records). Registry failures other than "schema not found" (a connection refused, a
  401) are not record corruption: they raise in both modes.

Writing (``formats.WriteFormats``):

- ``prepare_write_formats`` runs on the driver: each formatted column's writer schema text is fixed (the
  ``<column>Schema`` option, else derived from the column's Arrow type with ``schema_for_arrow``, records
  named by ``recordName`` / ``recordNamespace`` as Spark's ``to_avro``) and, when the topic is known from the
  ``topic`` option, its subject is resolved against the registry right away, so a refused registration fails
  the write before any task runs.
- ``FormatEncoder.encode(batch)`` runs in the tasks: values (``to_pylist``) are encoded with the writer
  schema's codec and framed with the subject's schema id (``auto.register.schemas``: registered, which
  answers the existing id when the schema is there; off: looked up, or the subject's latest version with
  ``use.latest.version``: the version the driver saw when the ``topic`` option names the topic, else the
  one each task process sees first), the ids cached per process. Subjects follow the column's strategy:
  ``TopicNameStrategy`` ``<topic>-<column>``, ``RecordNameStrategy`` the schema's record name,
  ``TopicRecordNameStrategy`` ``<topic>-<record name>``.

Both classes are used by one thread; the caches they use are thread-safe.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from spark_kafkalog.datasource.arrow_decode import kafka_schema
from spark_kafkalog.datasource.formats import (
    PROTOBUF,
    RECORD_NAME,
    TOPIC_NAME,
    ColumnFormat,
    ReadFormats,
    WriteFormats,
)
from spark_kafkalog.datasource.options import KafkaOptionError
from spark_kafkalog.datasource.registry_cache import cached, reader_codec, registry_client, schema_by_id
from spark_kafkalog.schemas.codec import DecodeError, EncodeError
from spark_kafkalog.schemas.wire_format import WireFormatError, frame, unframe

if TYPE_CHECKING:
    from spark_kafkalog.schemas import ParsedSchema
    from spark_kafkalog.schemas.codec import ValueCodec

__all__ = [
    "CORRUPT_RECORD_TYPE",
    "FormatDecoder",
    "FormatEncoder",
    "RecordDecodeError",
    "SchemaWriteError",
    "prepare_write_formats",
    "read_arrow_schema",
    "resolve_read_formats",
]

CORRUPT_RECORD_TYPE = pa.struct([("error", pa.string()), ("key", pa.binary()), ("value", pa.binary())])
"""The PERMISSIVE mode's corrupt-record column: why the record failed and its raw key and value."""

_SCHEMA_NOT_FOUND = 40403
_FRAME_PREFIX = 5  # Confluent's wire format: magic byte 0 and the 4-byte schema id


class RecordDecodeError(ValueError):
    """A record whose key or value cannot be decoded (FAILFAST); names topic, partition, offset, schema id."""


class SchemaWriteError(KafkaOptionError):
    """A writer schema the registry refused (or, without ``auto.register.schemas``, does not hold) for a
    subject; names the subject and the registry's message."""


def _registry_error_type() -> type[Exception]:
    from spark_kafkalog.client.schema_registry import SchemaRegistryError

    return SchemaRegistryError


# -- reading --------------------------------------------------------------------------------------------


def resolve_read_formats(formats: ReadFormats) -> ReadFormats:
    """``formats`` with each column's reader schema pinned by id (see the module docstring); an unknown
    subject, version or id, a schema that does not parse, or an unknown Protobuf message raise
    ``KafkaOptionError`` naming the option's subject/version/id and the registry's message."""
    registry_error = _registry_error_type()
    client = registry_client(formats.registry)
    client.clear_latest_caches()  # a worker process plans many queries: "latest" is asked again each time
    pinned: dict[str, ColumnFormat] = {}
    for column in formats.columns:
        try:
            if column.schema_id is None:
                assert column.subject is not None, "parse_read_formats names a subject when no id is given"
                registered = client.get_version(column.subject, column.version)
                column = replace(column, schema_id=registered.schema_id)
            assert column.schema_id is not None
            codec = reader_codec(formats.registry, column.schema_id, column.protobuf_message)
        except registry_error as e:
            raise KafkaOptionError(
                f"Cannot read the {column.column} reader schema ({column.describe()}) from the Schema Registry: "
                f"{getattr(e, 'message', e)}"
            ) from None
        except (ValueError, KeyError) as e:  # InvalidSchemaError, an unknown Protobuf message
            raise KafkaOptionError(
                f"The {column.column} reader schema ({column.describe()}) cannot be used: {e}"
            ) from None
        if codec.reader.schema_type != column.schema_type:
            raise KafkaOptionError(
                f"The {column.column} reader schema ({column.describe()}) is {codec.reader.schema_type}, but option "
                f"'{column.column}Format' says {column.format_name}"
            )
        pinned[column.column] = column
    return replace(formats, key=pinned.get("key"), value=pinned.get("value"))


def _codec(formats: ReadFormats, column: ColumnFormat) -> ValueCodec:
    assert column.schema_id is not None, "resolve_read_formats pins the reader schema"
    return reader_codec(formats.registry, column.schema_id, column.protobuf_message)


def read_arrow_schema(formats: ReadFormats, include_headers: bool) -> pa.Schema:
    """The Arrow schema of rows read with ``formats`` (resolved)."""
    schema = kafka_schema(include_headers)
    for column in formats.columns:
        index = schema.get_field_index(column.column)
        schema = schema.set(index, pa.field(column.column, _codec(formats, column).arrow_type))
    if formats.permissive:
        schema = schema.append(pa.field(formats.corrupt_column, CORRUPT_RECORD_TYPE))
    return schema


class FormatDecoder:
    """Decodes the formatted columns of Arrow batches of Spark's Kafka schema (see the module docstring)."""

    def __init__(self, formats: ReadFormats) -> None:
        self.formats = formats
        self._registry_error = _registry_error_type()

    def decode(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` with its formatted columns decoded (and the corrupt-record column in PERMISSIVE mode)."""
        errors: dict[int, list[str]] = {}
        raw_key, raw_value = batch.column("key"), batch.column("value")
        for column in self.formats.columns:
            codec = _codec(self.formats, column)
            array = self._decode_compiled(batch, column, codec)
            if array is None:
                values = self._decode_column(batch, column, codec, errors)
                try:
                    array = pa.array(values, type=codec.arrow_type)
                except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as e:
                    raise RecordDecodeError(
                        f"The decoded {column.column}s of {_where(batch, 0)} do not fit the reader's Arrow type "
                        f"{codec.arrow_type}: {e}"
                    ) from e
            index = batch.schema.get_field_index(column.column)
            batch = batch.set_column(index, pa.field(column.column, codec.arrow_type), array)
        if self.formats.permissive:
            batch = batch.append_column(
                pa.field(self.formats.corrupt_column, CORRUPT_RECORD_TYPE), _corrupt(raw_key, raw_value, errors)
            )
        return batch

    def _decode_compiled(self, batch: pa.RecordBatch, column: ColumnFormat, codec: ValueCodec) -> pa.Array | None:
        """The column in one step, without a Python value per record, when the codec has a compiled decoder
        (``AvroCodec.decode_arrow``), every present value is framed with the same schema id, its writer
        schema is at hand and every payload decodes; None otherwise (then the per-record path, which also
        explains every failure)."""
        decode_arrow = getattr(codec, "decode_arrow", None)
        if decode_arrow is None or column.schema_type == PROTOBUF:
            return None
        array = batch.column(column.column)
        schema_id = _single_schema_id(array)
        if schema_id is None:
            return None
        try:
            writer = schema_by_id(self.formats.registry, schema_id)
        except (self._registry_error, ValueError):  # the per-record path says what is wrong (or raises)
            return None
        if writer.schema_type != codec.reader.schema_type:
            return None
        result: pa.Array | None = decode_arrow(array, writer, _FRAME_PREFIX)
        return result

    def _decode_column(
        self, batch: pa.RecordBatch, column: ColumnFormat, codec: ValueCodec, errors: dict[int, list[str]]
    ) -> list[Any]:
        array = batch.column(column.column)
        out: list[Any] = [None] * len(array)
        protobuf = column.schema_type == PROTOBUF
        groups, unframed = _split_frames(array) if not protobuf else ({}, None)
        if unframed is None:  # Protobuf (message indexes: varints), or a column type the fast path skips
            raw = array.to_pylist()
            left: Sequence[int] = range(len(array))
        else:  # only the rows the fast path could not unframe (few): unframe says why
            raw = {row: array[row].as_py() for row in unframed}
            left = unframed
        for row in left:
            data = raw[row]
            if data is None:
                continue
            try:
                schema_id, indexes, payload = unframe(data, protobuf=protobuf)
            except WireFormatError as e:
                self._fail(batch, row, column, None, str(e), errors)
                continue
            groups.setdefault((schema_id, indexes), []).append((row, payload))
        for (schema_id, indexes), members in groups.items():
            writer = self._writer(batch, column, codec, schema_id, members, errors)
            if writer is None:
                continue
            try:
                decoded = codec.decode_many([p for _, p in members], writer, indexes)
            except DecodeError:
                decoded = None
            if decoded is not None:
                for (row, _), value in zip(members, decoded, strict=True):
                    out[row] = value
                continue
            for row, payload in members:  # find the records that fail, one by one
                try:
                    out[row] = codec.decode(payload, writer, indexes)
                except DecodeError as e:
                    self._fail(batch, row, column, schema_id, str(e), errors)
        return out

    def _writer(
        self,
        batch: pa.RecordBatch,
        column: ColumnFormat,
        codec: ValueCodec,
        schema_id: int,
        members: list[tuple[int, memoryview]],
        errors: dict[int, list[str]],
    ) -> ParsedSchema | None:
        why = None
        try:
            writer = schema_by_id(self.formats.registry, schema_id)
        except self._registry_error as e:
            if getattr(e, "error_code", None) != _SCHEMA_NOT_FOUND:
                raise
            why = f"the Schema Registry has no schema with id {schema_id} ({getattr(e, 'message', e)})"
        except ValueError as e:  # InvalidSchemaError: a registered schema this process cannot parse
            why = f"writer schema id {schema_id} does not parse: {e}"
        else:
            if writer.schema_type == codec.reader.schema_type:
                return writer
            why = f"writer schema id {schema_id} is {writer.schema_type}, not {codec.reader.schema_type}"
        for row, _ in members:
            self._fail(batch, row, column, schema_id, why, errors)
        return None

    def _fail(
        self,
        batch: pa.RecordBatch,
        row: int,
        column: ColumnFormat,
        schema_id: int | None,
        why: str,
        errors: dict[int, list[str]],
    ) -> None:
        sid = "" if schema_id is None else f" (schema id {schema_id})"
        if not self.formats.permissive:
            raise RecordDecodeError(
                f"Cannot decode the {column.column} of {_where(batch, row)}{sid} as {column.format_name}: {why}. "
                f'Read such records as null with .option("mode", "PERMISSIVE") (the reason goes to column '
                f"'{self.formats.corrupt_column}')"
            )
        errors.setdefault(row, []).append(f"{column.column}{sid}: {why}")


def _single_schema_id(array: pa.Array) -> int | None:
    """The schema id of every present value of a binary column when all are framed (magic byte 0, at
    least the 5-byte prefix) with the same id; None otherwise (or when no value is present)."""
    if not pa.types.is_binary(array.type) or len(array) == 0 or array.null_count == len(array):
        return None
    _, offsets_buffer, data_buffer = array.buffers()
    if offsets_buffer is None or data_buffer is None:
        return None
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32, count=len(array) + 1, offset=array.offset * 4)
    data = np.frombuffer(data_buffer, dtype=np.uint8)
    starts = offsets[:-1]
    if array.null_count:
        present = array.is_valid().to_numpy(zero_copy_only=False)
        starts, ends = starts[present], offsets[1:][present]
    else:
        ends = offsets[1:]
    if int(np.min(ends - starts)) < _FRAME_PREFIX:
        return None
    prefixes = data[starts[:, None] + np.arange(_FRAME_PREFIX)]
    if not (prefixes == prefixes[0]).all() or prefixes[0, 0] != 0:
        return None
    return int.from_bytes(prefixes[0, 1:].tobytes(), "big")


def _split_frames(
    array: pa.Array,
) -> tuple[dict[tuple[int, tuple[int, ...]], list[tuple[int, memoryview]]], list[int] | None]:
    """The framed values of a binary column grouped by schema id, ``{(id, ()): [(row, payload)]}``, read
    from the Arrow buffers with NumPy (no Python object per value but the payload views), and the rows
    left for ``unframe`` to explain (not null, but too short or without magic byte 0). ``(.., None)``:
    the column is not plain binary."""
    if not pa.types.is_binary(array.type) or len(array) == 0:
        return {}, None
    _, offsets_buffer, data_buffer = array.buffers()
    assert offsets_buffer is not None, "a binary array has offsets"
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32, count=len(array) + 1, offset=array.offset * 4)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    starts, ends = offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64)
    present = array.is_valid().to_numpy(zero_copy_only=False)
    framed = present & (ends - starts >= 5)
    at = starts[framed]
    framed[framed] = data[at] == 0
    rows = np.flatnonzero(framed)
    at = starts[rows]
    ids = (
        (data[at + 1].astype(np.int64) << 24)
        | (data[at + 2].astype(np.int64) << 16)
        | (data[at + 3].astype(np.int64) << 8)
        | data[at + 4].astype(np.int64)
    )
    view = memoryview(data_buffer) if data_buffer is not None else memoryview(b"")
    groups: dict[tuple[int, tuple[int, ...]], list[tuple[int, memoryview]]] = {}
    for schema_id in np.unique(ids).tolist():
        mine = rows[ids == schema_id] if len(ids) else rows
        groups[(schema_id, ())] = [
            (row, view[start + 5 : end])
            for row, start, end in zip(mine.tolist(), starts[mine].tolist(), ends[mine].tolist(), strict=True)
        ]
    return groups, np.flatnonzero(present & ~framed).tolist()


def _corrupt(keys: pa.Array, values: pa.Array, errors: dict[int, list[str]]) -> pa.Array:
    """The corrupt-record column: null for good rows, the reasons and raw key and value for failed ones."""
    rows: list[dict[str, Any] | None] = [None] * len(keys)
    for row, reasons in errors.items():
        rows[row] = {"error": "; ".join(reasons), "key": keys[row].as_py(), "value": values[row].as_py()}
    return pa.array(rows, type=CORRUPT_RECORD_TYPE)


def _where(batch: pa.RecordBatch, row: int) -> str:
    topic = batch.column("topic")[row].as_py() if batch.num_rows else "?"
    partition = batch.column("partition")[row].as_py() if batch.num_rows else "?"
    offset = batch.column("offset")[row].as_py() if batch.num_rows else "?"
    return f"topic '{topic}' partition {partition} offset {offset}"


# -- writing --------------------------------------------------------------------------------------------


def _writer_schema(formats: WriteFormats, column: ColumnFormat, arrow_type: pa.DataType | None) -> ParsedSchema:
    from spark_kafkalog.schemas.providers import parse_schema, schema_for_arrow

    if column.schema is not None:
        return parse_schema(column.schema_type, column.schema)
    assert arrow_type is not None, "a derived writer schema needs the column's type"
    return schema_for_arrow(
        column.schema_type, arrow_type, record_name=formats.record_name, namespace=formats.record_namespace
    )


def prepare_write_formats(
    formats: WriteFormats, arrow_types: Mapping[str, pa.DataType], topic: str | None
) -> WriteFormats:
    """``formats`` with each column's writer schema text fixed (explicit, or derived from ``arrow_types``
    of the DataFrame's ``key``/``value``), checked against the registry for ``topic`` when it is known.
    Raises ``KafkaOptionError`` for a schema that does not parse or cannot be derived, ``SchemaWriteError``
    when the registry refuses it."""
    fixed: dict[str, ColumnFormat] = {}
    for column in formats.columns:
        try:
            schema = _writer_schema(formats, column, arrow_types.get(column.column))
        except (ValueError, TypeError, NotImplementedError) as e:
            origin = (
                f"option '{column.column}Schema'"
                if column.schema is not None
                else f"the {column.column} column's type {arrow_types.get(column.column)}"
            )
            raise KafkaOptionError(f"Cannot make a {column.format_name} writer schema of {origin}: {e}") from None
        fixed[column.column] = replace(column, schema=schema.canonical)
    prepared = replace(formats, key=fixed.get("key"), value=fixed.get("value"))
    if topic is not None:
        encoder = FormatEncoder(prepared)
        for column in prepared.columns:
            schema_id, _ = encoder.resolve(column, encoder.subject(column, topic))  # not cached: asked afresh
            if prepared.use_latest_version:  # the tasks write with the version the driver saw
                fixed[column.column] = replace(column, schema_id=schema_id)
        prepared = replace(prepared, key=fixed.get("key"), value=fixed.get("value"))
    return prepared


class FormatEncoder:
    """Encodes the formatted columns of the Arrow batches a write task gets (see the module docstring)."""

    def __init__(self, formats: WriteFormats) -> None:
        self.formats = formats
        self._registry_error = _registry_error_type()

    def _schema(self, column: ColumnFormat) -> ParsedSchema:
        return cached(
            self.formats.registry,
            ("writer", column.schema_type, column.schema),
            lambda: _writer_schema(self.formats, column, None),
        )

    def subject(self, column: ColumnFormat, topic: str) -> str:
        """The subject of ``column``'s records in ``topic`` under the column's strategy."""
        if column.strategy == TOPIC_NAME:
            return f"{topic}-{column.column}"
        name = self._schema(column).name
        if not name:
            raise SchemaWriteError(
                f"{column.strategy} needs a named writer schema (an Avro record, a Protobuf message, a JSON Schema "
                f"with a title) for the {column.column} column; use TopicNameStrategy or give "
                f"'{column.column}Schema' a named schema"
            )
        return name if column.strategy == RECORD_NAME else f"{topic}-{name}"

    def target(self, column: ColumnFormat, topic: str) -> tuple[int, ValueCodec]:
        """``(schema id, codec)`` that ``column``'s values in ``topic`` are written with, cached per process."""
        subject = self.subject(column, topic)
        formats = self.formats
        key = (
            ("target", subject, column.schema_type, column.schema, column.protobuf_message, column.schema_id),
            (formats.auto_register, formats.use_latest_version, formats.normalize),
        )
        return cached(formats.registry, key, lambda: self.resolve(column, subject))

    def resolve(self, column: ColumnFormat, subject: str) -> tuple[int, ValueCodec]:
        """``target`` without the cache: registers, looks up or reads the latest version now."""
        from spark_kafkalog.client.schema_registry import Schema
        from spark_kafkalog.schemas.providers import codec_for

        formats = self.formats
        client = registry_client(formats.registry)
        options = {"message": column.protobuf_message} if column.protobuf_message else {}
        try:
            if formats.use_latest_version:
                schema_id = column.schema_id  # pinned by prepare_write_formats when the topic is known
                if schema_id is None:
                    client.clear_latest_caches()
                    schema_id = client.get_latest_version(subject).schema_id
                return schema_id, codec_for(schema_by_id(formats.registry, schema_id), **options)
            schema = self._schema(column)
            text = Schema(schema.canonical, schema.schema_type)
            if formats.auto_register:
                schema_id = client.register_schema(subject, text, normalize_schemas=formats.normalize)
            else:
                schema_id = client.lookup_schema(subject, text, normalize_schemas=formats.normalize).schema_id
            return schema_id, codec_for(schema, **options)
        except self._registry_error as e:
            message = getattr(e, "message", str(e))
            if formats.use_latest_version:
                what = "has no latest version to write with (use.latest.version)"
            elif formats.auto_register:
                what = "refused the writer schema"
            else:
                what = "holds no version matching the writer schema and auto.register.schemas is false"
            raise SchemaWriteError(
                f"Cannot write the {column.column} column as {column.format_name}: the Schema Registry's subject "
                f"'{subject}' {what}: {message}"
            ) from None

    def _encode_rows(self, column: ColumnFormat, codec: ValueCodec, values: list[Any], rows: list[int]) -> list[bytes]:
        try:
            return codec.encode_many(values)
        except EncodeError:
            pass
        for row, value in zip(rows, values, strict=True):  # name the first row that fails
            try:
                codec.encode(value)
            except EncodeError as e:
                raise SchemaWriteError(
                    f"Cannot encode the {column.column} of row {row} of this batch as {column.format_name}: {e}"
                ) from e
        raise AssertionError("encode_many failed, but every value encodes alone")

    def encode(self, batch: pa.RecordBatch, topic: str | None) -> pa.RecordBatch:
        """``batch`` with its formatted columns replaced by framed binary (``topic``: the ``topic`` option,
        else the batch's ``topic`` column names each row's topic)."""
        for column in self.formats.columns:
            if column.column not in batch.schema.names:
                continue
            values = batch.column(column.column).to_pylist()
            topics = [topic] * len(values) if topic is not None else batch.column("topic").to_pylist()
            out: list[bytes | None] = [None] * len(values)
            by_topic: dict[str, list[int]] = {}
            for row, value in enumerate(values):
                if value is not None and topics[row] is not None:  # a null topic: RecordWriter refuses the row
                    by_topic.setdefault(topics[row], []).append(row)
            for row_topic, rows in by_topic.items():
                schema_id, codec = self.target(column, row_topic)
                payloads = self._encode_rows(column, codec, [values[r] for r in rows], rows)
                indexes = codec.message_indexes
                for row, payload in zip(rows, payloads, strict=True):
                    out[row] = frame(schema_id, payload, indexes)
            index = batch.schema.get_field_index(column.column)
            batch = batch.set_column(index, pa.field(column.column, pa.binary()), pa.array(out, type=pa.binary()))
        return batch
