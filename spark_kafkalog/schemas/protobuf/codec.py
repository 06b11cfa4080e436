"""``ProtobufCodec``: Protobuf messages to and from the Arrow values Spark's ``from_protobuf`` gives.

Arrow types (Spark's ``from_protobuf``)::

    int32, sint32, sfixed32, uint32, fixed32    int32          float     float32
    int64, sint64, sfixed64, uint64, fixed64    int64          double    float64
    bool                                        bool           string    string
    bytes                                       binary         enum      string (int32 with enums_as_ints)
    message                                     struct (fields in declaration order, oneof members included)
    repeated T                                  list<T>        map<K, V> map<K, V>
    google.protobuf.Timestamp                   timestamp("us", tz="UTC")
    google.protobuf.Duration                    duration("us")

A recursive message (a message reachable from itself) has no Arrow type: ``InvalidSchemaError`` names the
cycle. Every field is nullable. Values as Spark reads them: a field that is not set is None (a field with
explicit presence - a message, a oneof member, proto2/proto3 ``optional`` - when absent; a field without
presence when it holds its default value, unless ``emit_default_values``; an empty repeated or map field
unless ``emit_default_values``); enums read as the writer's names, a number the writer's schema does not name as its number in text.

Decoding reads the payload with the writer's message (``writer`` at ``message_indexes``) and converts it by
field name into the reader's shape (fields the writer lacks are None; compatible scalar changes convert).
Encoding builds the reader's message from a value of ``arrow_type`` (dicts for structs; maps as dicts or
``(key, value)`` pairs; ``datetime`` for Timestamps, naive ones taken as UTC; ``timedelta`` for Durations;
enum names or numbers; also ``datetime.date`` for an int32 field (days since 1970-01-01) and ``Decimal`` for a
string field, the forms ``schema_for_arrow`` gives Spark's dates and decimals).

A codec is immutable and thread-safe (message classes come from protobuf's message factory, cached per
descriptor).
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pyarrow as pa
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.protobuf.message import Message

from spark_kafkalog.schemas.codec import DecodeError, EncodeError, ValueCodec
from spark_kafkalog.schemas.parsed_schema import InvalidSchemaError, ParsedSchema
from spark_kafkalog.schemas.protobuf.schema import ProtobufSchema

FD = FieldDescriptor
TIMESTAMP = "google.protobuf.Timestamp"
DURATION = "google.protobuf.Duration"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_DATE = datetime.date(1970, 1, 1)

_SCALAR_ARROW = {
    FD.TYPE_INT32: pa.int32(),
    FD.TYPE_SINT32: pa.int32(),
    FD.TYPE_SFIXED32: pa.int32(),
    FD.TYPE_UINT32: pa.int32(),
    FD.TYPE_FIXED32: pa.int32(),
    FD.TYPE_INT64: pa.int64(),
    FD.TYPE_SINT64: pa.int64(),
    FD.TYPE_SFIXED64: pa.int64(),
    FD.TYPE_UINT64: pa.int64(),
    FD.TYPE_FIXED64: pa.int64(),
    FD.TYPE_FLOAT: pa.float32(),
    FD.TYPE_DOUBLE: pa.float64(),
    FD.TYPE_BOOL: pa.bool_(),
    FD.TYPE_STRING: pa.string(),
    FD.TYPE_BYTES: pa.binary(),
}
_INT_TYPES = {
    FD.TYPE_INT32,
    FD.TYPE_SINT32,
    FD.TYPE_SFIXED32,
    FD.TYPE_UINT32,
    FD.TYPE_FIXED32,
    FD.TYPE_INT64,
    FD.TYPE_SINT64,
    FD.TYPE_SFIXED64,
    FD.TYPE_UINT64,
    FD.TYPE_FIXED64,
}


def _is_map(fd: FieldDescriptor) -> bool:
    return bool(fd.message_type is not None and fd.message_type.GetOptions().map_entry)


def _is_message(fd: FieldDescriptor) -> bool:
    return fd.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP)


def arrow_type_of(descriptor: Descriptor, *, enums_as_ints: bool = False) -> pa.DataType:
    """The Arrow struct type of ``descriptor`` by Spark's ``from_protobuf`` rules (module docstring)."""
    return _message_arrow(descriptor, enums_as_ints, ())


def _message_arrow(descriptor: Descriptor, enums_as_ints: bool, stack: tuple[str, ...]) -> pa.DataType:
    if descriptor.full_name == TIMESTAMP:
        return pa.timestamp("us", tz="UTC")
    if descriptor.full_name == DURATION:
        return pa.duration("us")
    if descriptor.full_name in stack:
        cycle = " -> ".join((*stack[stack.index(descriptor.full_name) :], descriptor.full_name))
        raise InvalidSchemaError(f"recursive Protobuf message {cycle} has no Spark type (as from_protobuf refuses it)")
    stack = (*stack, descriptor.full_name)
    return pa.struct([pa.field(fd.name, _field_arrow(fd, enums_as_ints, stack)) for fd in descriptor.fields])


def _single_arrow(fd: FieldDescriptor, enums_as_ints: bool, stack: tuple[str, ...]) -> pa.DataType:
    if _is_message(fd):
        return _message_arrow(fd.message_type, enums_as_ints, stack)
    if fd.type == FD.TYPE_ENUM:
        return pa.int32() if enums_as_ints else pa.string()
    return _SCALAR_ARROW[fd.type]


def _field_arrow(fd: FieldDescriptor, enums_as_ints: bool, stack: tuple[str, ...]) -> pa.DataType:
    if _is_map(fd):
        entry = fd.message_type
        key = _single_arrow(entry.fields_by_name["key"], enums_as_ints, stack)
        value = _single_arrow(entry.fields_by_name["value"], enums_as_ints, stack)
        return pa.map_(key, value)
    single = _single_arrow(fd, enums_as_ints, stack)
    return pa.list_(single) if fd.is_repeated else single


class ProtobufCodec(ValueCodec):
    """Reads payloads into ``arrow_type`` values of the reader's message and writes them back (module docs).

    ``message``: the reader message's full name (default: the schema's first message)."""

    def __init__(
        self,
        reader: ProtobufSchema,
        *,
        message: str | None = None,
        enums_as_ints: bool = False,
        emit_default_values: bool = False,
    ) -> None:
        self.reader = reader
        if not reader.file_descriptor_proto.message_type:
            raise InvalidSchemaError("the Protobuf schema declares no message to read or write")
        try:
            self.message_indexes = reader.message_indexes(message) if message else (0,)
        except KeyError as e:
            raise InvalidSchemaError(str(e.args[0])) from None
        self.descriptor = reader.message_descriptor(self.message_indexes)
        self.enums_as_ints = enums_as_ints
        self.emit_default_values = emit_default_values
        self.arrow_type = arrow_type_of(self.descriptor, enums_as_ints=enums_as_ints)
        self._reader_class = message_factory.GetMessageClass(self.descriptor)

    def __repr__(self) -> str:
        return f"ProtobufCodec({self.descriptor.full_name})"

    # -- decoding
    def _writer_class(self, writer: ParsedSchema, message_indexes: tuple[int, ...]) -> type[Message]:
        if writer is self.reader and tuple(message_indexes or (0,)) == self.message_indexes:
            return self._reader_class
        if not isinstance(writer, ProtobufSchema):
            raise DecodeError(f"the writer schema is {writer.schema_type}, not PROTOBUF")
        try:
            descriptor = writer.message_descriptor(tuple(message_indexes) or (0,))
        except KeyError as e:
            raise DecodeError(f"the writer schema has no message at indexes {list(message_indexes)}: {e}") from None
        return message_factory.GetMessageClass(descriptor)

    def decode(self, payload: bytes | memoryview, writer: ParsedSchema, message_indexes: tuple[int, ...] = ()) -> Any:
        cls = self._writer_class(writer, message_indexes)
        return self._decode_with(cls, payload)

    def decode_many(self, payloads: Any, writer: ParsedSchema, message_indexes: tuple[int, ...] = ()) -> list[Any]:
        cls = self._writer_class(writer, message_indexes)
        out = []
        for index, payload in enumerate(payloads):
            try:
                out.append(self._decode_with(cls, payload))
            except DecodeError as e:
                raise DecodeError(f"payload {index}: {e}") from e
        return out

    def _decode_with(self, cls: type[Message], payload: bytes | memoryview) -> Any:
        msg = cls()
        try:
            msg.ParseFromString(bytes(payload))
        except (ProtobufDecodeError, RuntimeError, ValueError) as e:
            raise DecodeError(f"not a {cls.DESCRIPTOR.full_name} message: {e}") from None
        return self._message_value(msg, self.descriptor, self.descriptor.full_name)

    def _message_value(self, msg: Message, reader: Descriptor, path: str) -> Any:
        name = reader.full_name
        if name == TIMESTAMP:
            return _EPOCH + datetime.timedelta(seconds=msg.seconds, microseconds=msg.nanos // 1000)
        if name == DURATION:
            return datetime.timedelta(seconds=msg.seconds, microseconds=int(msg.nanos / 1000))
        writer_fields = msg.DESCRIPTOR.fields_by_name
        out = {}
        for rfd in reader.fields:
            wfd = writer_fields.get(rfd.name)
            out[rfd.name] = None if wfd is None else self._field_value(msg, wfd, rfd, f"{path}.{rfd.name}")
        return out

    def _field_value(self, msg: Message, wfd: FieldDescriptor, rfd: FieldDescriptor, path: str) -> Any:
        if _is_map(rfd) != _is_map(wfd) or rfd.is_repeated != wfd.is_repeated or _is_message(rfd) != _is_message(wfd):
            raise DecodeError(f"field {path}: the writer's field and the reader's have different kinds")
        value = getattr(msg, wfd.name)
        if _is_map(wfd):
            if not len(value) and not self.emit_default_values:
                return None
            rkey = rfd.message_type.fields_by_name["key"]
            wval = wfd.message_type.fields_by_name["value"]
            rval = rfd.message_type.fields_by_name["value"]
            return [
                (self._single(k, wfd.message_type.fields_by_name["key"], rkey, path), self._single(v, wval, rval, path))
                for k, v in value.items()
            ]
        if wfd.is_repeated:
            if not len(value) and not self.emit_default_values:
                return None
            return [self._single(v, wfd, rfd, path) for v in value]
        if wfd.has_presence:
            if not msg.HasField(wfd.name):
                return None
        elif not self.emit_default_values and value == wfd.default_value:
            return None
        return self._single(value, wfd, rfd, path)

    def _single(self, value: Any, wfd: FieldDescriptor, rfd: FieldDescriptor, path: str) -> Any:
        if _is_message(rfd):
            return self._message_value(value, rfd.message_type, path)
        if wfd.type == FD.TYPE_ENUM:
            if rfd.type == FD.TYPE_ENUM and self.enums_as_ints:
                return value
            if rfd.type != FD.TYPE_ENUM:
                return self._scalar(value, rfd, path)
            known = wfd.enum_type.values_by_number.get(value)
            return known.name if known is not None else str(value)
        if rfd.type == FD.TYPE_ENUM:
            if not isinstance(value, int):
                raise DecodeError(f"field {path}: a {type(value).__name__} cannot be read as an enum")
            if self.enums_as_ints:
                return value
            known = rfd.enum_type.values_by_number.get(value)
            return known.name if known is not None else str(value)
        return self._scalar(value, rfd, path)

    def _scalar(self, value: Any, rfd: FieldDescriptor, path: str) -> Any:
        kind = rfd.type
        if kind == FD.TYPE_STRING and isinstance(value, bytes):
            try:
                return value.decode("utf-8")
            except UnicodeDecodeError as e:
                raise DecodeError(f"field {path}: bytes that are not UTF-8 ({e})") from None
        if kind == FD.TYPE_BYTES and isinstance(value, str):
            return value.encode("utf-8")
        if kind in _INT_TYPES:
            if isinstance(value, bool) or isinstance(value, int):
                value = int(value)
                bits = 32 if _SCALAR_ARROW[kind] == pa.int32() else 64
                value &= (1 << bits) - 1
                return value - (1 << bits) if value >= 1 << (bits - 1) else value
            raise DecodeError(f"field {path}: a {type(value).__name__} cannot be read as an integer")
        if kind == FD.TYPE_BOOL:
            return bool(value)
        return value

    # -- encoding
    def encode(self, value: Any) -> bytes:
        msg = self._reader_class()
        self._fill(msg, value, self.descriptor.full_name)
        try:
            return msg.SerializeToString()
        except Exception as e:  # an unset required field (proto2) and the like
            raise EncodeError(f"{self.descriptor.full_name}: {e}") from None

    def _fill(self, msg: Message, value: Any, path: str) -> None:
        descriptor = msg.DESCRIPTOR
        if descriptor.full_name == TIMESTAMP:
            msg.CopyFrom(_timestamp(value, path, type(msg)))
            return
        if descriptor.full_name == DURATION:
            if not isinstance(value, datetime.timedelta):
                raise EncodeError(f"field {path}: a Duration needs a timedelta, not {type(value).__name__}")
            msg.FromTimedelta(value)
            return
        if not isinstance(value, dict):
            raise EncodeError(
                f"field {path}: a {descriptor.full_name} message needs a dict, not {type(value).__name__}"
            )
        fields = descriptor.fields_by_name
        for name, v in value.items():
            fd = fields.get(name)
            if fd is None:
                raise EncodeError(f"field {path}.{name}: {descriptor.full_name} has no field {name!r}")
            if v is None:
                continue
            self._set(msg, fd, v, f"{path}.{name}")

    def _set(self, msg: Message, fd: FieldDescriptor, value: Any, path: str) -> None:
        target = getattr(msg, fd.name)
        if _is_map(fd):
            items = value.items() if isinstance(value, dict) else value
            vfd = fd.message_type.fields_by_name["value"]
            kfd = fd.message_type.fields_by_name["key"]
            for k, v in items:
                key = self._scalar_in(kfd, k, path)
                if _is_message(vfd):
                    self._fill(target[key], v, f"{path}[{k!r}]")
                elif v is not None:
                    target[key] = self._scalar_in(vfd, v, f"{path}[{k!r}]")
            return
        if fd.is_repeated:
            if not isinstance(value, list | tuple):
                raise EncodeError(f"field {path}: a repeated field needs a list, not {type(value).__name__}")
            for i, item in enumerate(value):
                if item is None:
                    raise EncodeError(f"field {path}[{i}]: a repeated field cannot hold null")
                if _is_message(fd):
                    self._fill(target.add(), item, f"{path}[{i}]")
                else:
                    target.append(self._scalar_in(fd, item, f"{path}[{i}]"))
            return
        if _is_message(fd):
            self._fill(target, value, path)
            getattr(msg, fd.name).SetInParent()
            return
        try:
            setattr(msg, fd.name, self._scalar_in(fd, value, path))
        except (TypeError, ValueError) as e:
            raise EncodeError(f"field {path}: {e}") from None

    def _scalar_in(self, fd: FieldDescriptor, value: Any, path: str) -> Any:
        kind = fd.type
        if kind == FD.TYPE_ENUM:
            if isinstance(value, str):
                known = fd.enum_type.values_by_name.get(value)
                if known is None:
                    raise EncodeError(f"field {path}: {fd.enum_type.full_name} has no value {value!r}")
                return known.number
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            raise EncodeError(f"field {path}: an enum needs a name or a number, not {type(value).__name__}")
        if kind in _INT_TYPES and isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
            return (value - _EPOCH_DATE).days
        if kind == FD.TYPE_STRING and isinstance(value, decimal.Decimal):
            return str(value)
        if kind == FD.TYPE_STRING and not isinstance(value, str):
            raise EncodeError(f"field {path}: a string field needs str, not {type(value).__name__}")
        if kind == FD.TYPE_BYTES and not isinstance(value, bytes | bytearray | memoryview):
            raise EncodeError(f"field {path}: a bytes field needs bytes, not {type(value).__name__}")
        if kind == FD.TYPE_BYTES:
            return bytes(value)
        if kind in _INT_TYPES and (isinstance(value, bool) or not isinstance(value, int)):
            raise EncodeError(f"field {path}: an integer field needs int, not {type(value).__name__}")
        if kind in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE) and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise EncodeError(f"field {path}: a floating-point field needs a number, not {type(value).__name__}")
        if kind == FD.TYPE_BOOL and not isinstance(value, bool):
            raise EncodeError(f"field {path}: a bool field needs bool, not {type(value).__name__}")
        return value


def _timestamp(value: Any, path: str, cls: type[Message]) -> Message:
    if not isinstance(value, datetime.datetime):
        raise EncodeError(f"field {path}: a Timestamp needs a datetime, not {type(value).__name__}")
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    delta = value - _EPOCH
    seconds, micros = divmod(delta // datetime.timedelta(microseconds=1), 1_000_000)
    ts = cls()
    ts.seconds = seconds
    ts.nanos = micros * 1000
    return ts
