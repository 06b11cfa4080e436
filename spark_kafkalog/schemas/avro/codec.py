"""``AvroCodec``: Avro payloads (Confluent's wire format without its prefix) to and from the values of the
reader schema's Arrow type (``spark_kafkalog.schemas.avro.arrow`` states the type rules).

Decoding resolves the writer's schema against the reader's with fastavro's ``schemaless_reader`` (Avro's
schema resolution: promotions, defaults of missing fields, dropped writer fields, enum defaults), asking it
for the names of named union branches so a union read as ``struct<member0, ...>`` knows its branch, then
shapes the datum (compiled converters; nothing to do for records of plain primitives). A payload longer than
its datum is refused: Confluent's format carries exactly one datum.

Encoding is the inverse: the Arrow-shaped value is turned into an Avro datum (a union struct into its set
member, named branches as fastavro's ``(name, value)`` tuples) and written with ``schemaless_writer``.

A writer other than the reader is resolved by reading with the writer alone and projecting the datum onto
the reader (``projection``: compiled once per writer, cached by its canonical text) where the projection
covers the change, else by fastavro's resolution per datum; both give the same values. fastavro's resolution
reads with a copy of the reader whose field defaults are datums (``defaults``: a ``bytes`` decimal's
``"\u0000"`` is ``0.00`` as Avro Java reads it, not the string fastavro would pass through).

``decode_many`` reads every payload of one writer from one buffer. ``decode_arrow`` decodes a whole binary
column of payloads of one writer straight into an Arrow array with the compiled kernel (``columnar``) where it
covers the writer (the reader's own schema, shapes in ``columnar``'s table) and every payload; None otherwise.
Codecs are thread-safe: fastavro keeps no state between calls and the projection cache is filled
idempotently (two threads may compile the same entry; either result is the same).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

import fastavro
import pyarrow as pa

from spark_kafkalog.schemas.avro import columnar
from spark_kafkalog.schemas.avro.arrow import Compiler, Convert
from spark_kafkalog.schemas.avro.defaults import with_datum_defaults
from spark_kafkalog.schemas.avro.projection import IDENTITY, projection
from spark_kafkalog.schemas.avro.schema import AvroSchema
from spark_kafkalog.schemas.codec import DecodeError, EncodeError, ValueCodec
from spark_kafkalog.schemas.parsed_schema import ParsedSchema


class AvroCodec(ValueCodec):
    """The codec of one reader ``AvroSchema``; ``arrow_type`` follows Spark's ``from_avro``."""

    reader: AvroSchema

    def __init__(self, reader: AvroSchema, *, project: bool = True) -> None:
        if not isinstance(reader, AvroSchema):
            raise TypeError(f"AvroCodec needs an AvroSchema, not {type(reader).__name__}")
        self.reader = reader
        self._project = project
        self._projections: dict[str, Any] = {}  # writer canonical -> (reader schema or None, projection or None)
        self._resolving: Any = None  # the reader for fastavro's resolution (defaults as datums), made once
        self._programs: dict[ParsedSchema, columnar.Program | None] = {}  # writer -> compiled program or None
        root = Compiler(reader).compile(reader.fastavro_schema)
        self.arrow_type = root.arrow_type
        self.nullable = root.nullable
        self._to_arrow = root.to_arrow
        self._to_avro = root.to_avro

    def __repr__(self) -> str:
        return f"AvroCodec({self.reader!r} -> {self.arrow_type})"

    def _schemas(self, writer: ParsedSchema) -> tuple[Any, Any, Convert | None]:
        """The writer's fastavro schema, the reader's for fastavro to resolve against (None: read with the
        writer alone) and the converter of the datum into the reader's Arrow value (None: as it is)."""
        if not isinstance(writer, AvroSchema):
            raise DecodeError(f"an Avro payload needs an Avro writer schema, not {writer.schema_type}")
        if writer is self.reader or writer.canonical == self.reader.canonical:
            return writer.fastavro_schema, None, self._to_arrow
        plan = self._projections.get(writer.canonical)
        if plan is None:
            project = projection(writer, self.reader) if self._project else None
            if project is None:
                plan = (self._resolving_reader(), self._to_arrow)
            else:
                plan = (None, _chain(None if project is IDENTITY else project, self._to_arrow))
            self._projections[writer.canonical] = plan
        return writer.fastavro_schema, plan[0], plan[1]

    def _resolving_reader(self) -> Any:
        """The reader's fastavro schema with its defaults as datums (``defaults``), made once."""
        if self._resolving is None:
            self._resolving = with_datum_defaults(self.reader.fastavro_schema)
        return self._resolving

    def decode(self, payload: bytes | memoryview, writer: ParsedSchema, message_indexes: tuple[int, ...] = ()) -> Any:
        writer_schema, reader, shape = self._schemas(writer)
        data = bytes(payload)
        stream = io.BytesIO(data)
        try:
            datum = fastavro.schemaless_reader(stream, writer_schema, reader, return_named_type=True)
            if stream.tell() != len(data):
                raise DecodeError(f"{len(data) - stream.tell()} bytes left after the Avro datum ({len(data)} bytes)")
            return shape(datum) if shape is not None and datum is not None else datum
        except DecodeError:
            raise
        except Exception as e:  # fastavro: EOFError, SchemaResolutionError, UnicodeDecodeError, ValueError ...
            raise DecodeError(f"Avro payload of {len(data)} bytes: {type(e).__name__}: {e}") from None

    def decode_many(
        self, payloads: Sequence[bytes | memoryview], writer: ParsedSchema, message_indexes: tuple[int, ...] = ()
    ) -> list[Any]:
        writer_schema, reader, shape = self._schemas(writer)
        ends = []
        end = 0
        for payload in payloads:
            end += len(payload)
            ends.append(end)
        stream = io.BytesIO(b"".join(payloads))
        read = fastavro.schemaless_reader
        out: list[Any] = []
        append = out.append
        index = -1
        try:
            for end in ends:
                index += 1
                datum = read(stream, writer_schema, reader, return_named_type=True)
                if stream.tell() != end:
                    stream.seek(end)
                    raise DecodeError("the payload's length does not match its Avro datum")
                append(shape(datum) if shape is not None and datum is not None else datum)
        except DecodeError as e:
            raise DecodeError(f"payload {index}: {e}") from None
        except Exception as e:
            raise DecodeError(f"payload {index}: Avro payload: {type(e).__name__}: {e}") from None
        return out

    def decode_arrow(self, payloads: pa.Array, writer: ParsedSchema, skip: int = 0) -> pa.Array | None:
        """Every value of binary array ``payloads`` (an Avro payload of ``writer`` after ``skip`` prefix bytes;
        a null value stays null) as one array of ``arrow_type``, decoded by the compiled kernel; None when the
        kernel is not built, does not cover ``writer`` or some payload (then ``decode_many`` explains)."""
        if not isinstance(writer, AvroSchema):
            return None
        if writer in self._programs:
            program = self._programs[writer]
        else:
            program = columnar.compile_program(writer, self.reader)
            if program is not None and program.arrow_type != self.arrow_type:
                program = None
            self._programs[writer] = program  # idempotent: two threads compile the same program
        if program is None:
            return None
        return columnar.decode_column(program, payloads, skip)

    def to_datum(self, value: Any) -> Any:
        """The Avro datum (fastavro's Python form) of one value of ``arrow_type``."""
        if value is None or self._to_avro is None:
            return value
        return self._to_avro(value)

    def encode(self, value: Any) -> bytes:
        stream = io.BytesIO()
        try:
            fastavro.schemaless_writer(stream, self.reader.fastavro_schema, self.to_datum(value))
        except EncodeError:
            raise
        except Exception as e:  # fastavro: ValueError, TypeError, AttributeError, KeyError ...
            raise EncodeError(
                f"cannot write {_describe(value)} with {self.reader.name or 'the schema'}: {type(e).__name__}: {e}"
            ) from None
        return stream.getvalue()

    def encode_many(self, values: Iterable[Any]) -> list[bytes]:
        return [self.encode(v) for v in values]


def _chain(first: Convert | None, second: Convert | None) -> Convert | None:
    if first is None or second is None:
        return first or second

    def both(value: Any) -> Any:
        value = first(value)
        return second(value) if value is not None else value

    return both


def _describe(value: Any) -> str:
    text = repr(value)
    return f"a {type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"


def codec(reader: ParsedSchema, **options: Any) -> AvroCodec:
    """The codec of an Avro reader schema. Option ``project`` (default True): resolve writers by projection
    where it covers the change (False: always fastavro's resolution). An unknown option raises ``TypeError``."""
    unknown = set(options) - {"project"}
    if unknown:
        raise TypeError(f"unknown Avro codec options: {', '.join(sorted(unknown))}")
    if not isinstance(reader, AvroSchema):
        raise TypeError(f"an Avro codec needs an AvroSchema, not {type(reader).__name__}")
    return AvroCodec(reader, project=bool(options.get("project", True)))
