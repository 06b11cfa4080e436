"""The one generic codec: encodes and decodes any declared struct at any declared version.

For each (struct, version) the declaration is compiled once into a list of per-field reader and writer
closures (cached on the ``StructSpec``); encoding and decoding then just run those lists. In flexible
versions every struct ends with a tag buffer (unsigned varint count, then ascending ``tag, size, bytes``
entries); known tagged fields are decoded, unknown ones are kept raw in ``unknown_tags``. A nullable struct is
preceded by an ``int8`` (-1 null, 1 present), or in a tagged field by an unsigned varint (0 null, 1 present), as
Kafka's generated code writes them.

Decoding returns a whole message or raises ``DecodeError``; encoding raises ``EncodeError`` naming the
field path. Compiled codecs are immutable and may be shared across threads.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from .exceptions import DecodeError, EncodeError
from .primitives import Reader, Writer
from .schema import FieldSpec, StructSpec

DecodeFn = Callable[[Reader], Any]
EncodeFn = Callable[[Writer, Any], None]

# Exceptions that a malformed buffer can raise inside a compiled decoder; all become DecodeError.
_DECODE_FAILURES = (struct.error, IndexError, ValueError, OverflowError, UnicodeDecodeError)
# Exceptions that a wrong value can raise inside a compiled encoder; all become EncodeError.
_ENCODE_FAILURES = (struct.error, TypeError, ValueError, OverflowError, AttributeError)


def _prim_reader(prim: str, nullable: bool, flexible: bool) -> DecodeFn:
    if prim in ("string", "bytes", "records"):
        method = ("compact_" if flexible else "") + ("nullable_" if nullable and prim != "records" else "") + prim
        if prim == "records" and not nullable:
            inner = getattr(Reader, method)

            def read_records(r: Reader) -> Any:
                v = inner(r)
                if v is None:
                    raise r.fail("null records where records are required")
                return v

            return read_records
        return getattr(Reader, method)
    return getattr(Reader, prim)


def _prim_writer(prim: str, nullable: bool, flexible: bool) -> EncodeFn:
    if prim in ("string", "bytes"):
        return getattr(Writer, ("compact_" if flexible else "") + ("nullable_" if nullable else "") + prim)
    if prim == "records":
        inner = getattr(Writer, ("compact_" if flexible else "") + "records")
        if nullable:
            return inner

        def write_records(w: Writer, v: Any) -> None:
            if v is None:
                raise EncodeError("null records where records are required")
            inner(w, v)

        return write_records
    return getattr(Writer, prim)


def _field_reader(f: FieldSpec, version: int, flexible: bool, tagged: bool = False) -> DecodeFn:
    nullable = f.nullable_in(version)
    if f.kind == "prim":
        return _prim_reader(f.prim_type, nullable, flexible)
    if f.kind == "struct":
        sub = struct_decoder(f.struct_spec, version, flexible)
        if not nullable:
            return sub
        if tagged:  # Kafka's generated code: an unsigned varint, 0 = null, else the struct follows

            def read_tagged_nullable_struct(r: Reader) -> Any:
                return None if r.uvarint() == 0 else sub(r)

            return read_tagged_nullable_struct

        def read_nullable_struct(r: Reader) -> Any:
            return None if r.int8() < 0 else sub(r)

        return read_nullable_struct
    # array
    elem = _prim_reader(f.prim, False, flexible) if f.prim else struct_decoder(f.struct_spec, version, flexible)
    name = f.name

    def read_array(r: Reader) -> Any:
        n = (r.uvarint() - 1) if flexible else r.int32()
        if n < 0:
            if n == -1 and nullable:
                return None
            raise r.fail(f"{name}: null or negative array count {n}")
        r.count(n)
        return [elem(r) for _ in range(n)]

    return read_array


def _field_writer(f: FieldSpec, version: int, flexible: bool, tagged: bool = False) -> EncodeFn:
    nullable = f.nullable_in(version)
    if f.kind == "prim":
        return _prim_writer(f.prim_type, nullable, flexible)
    if f.kind == "struct":
        sub = struct_encoder(f.struct_spec, version, flexible)

        def write_struct(w: Writer, v: Any) -> None:
            if v is None:
                if not nullable:
                    raise EncodeError("null struct where a value is required")
                if tagged:
                    w.uvarint(0)
                else:
                    w.int8(-1)
                return
            if nullable:
                if tagged:
                    w.uvarint(1)
                else:
                    w.int8(1)
            sub(w, v)

        return write_struct
    elem = _prim_writer(f.prim, False, flexible) if f.prim else struct_encoder(f.struct_spec, version, flexible)

    def write_array(w: Writer, v: Any) -> None:
        if v is None:
            if not nullable:
                raise EncodeError("null array where an array is required")
            if flexible:
                w.uvarint(0)
            else:
                w.int32(-1)
            return
        if flexible:
            w.uvarint(len(v) + 1)
        else:
            w.int32(len(v))
        for i, x in enumerate(v):
            try:
                elem(w, x)
            except EncodeError as e:
                raise EncodeError(f"[{i}]: {e}") from None

    return write_array


def struct_decoder(spec: StructSpec, version: int, flexible: bool) -> DecodeFn:
    """The compiled decoder of ``spec`` at ``version`` (cached)."""
    key = ("d", version, flexible)
    fn = spec.codecs.get(key)
    if fn is not None:
        return fn
    cls = spec.cls
    readers: list[tuple[str, DecodeFn]] = []
    defaults: list[FieldSpec] = []
    tagged: dict[int, tuple[str, DecodeFn]] = {}
    for f in spec.fields:
        if not f.in_version(version):
            defaults.append(f)
        elif flexible and f.tag is not None:
            defaults.append(f)
            tagged[f.tag] = (f.name, _field_reader(f, version, True, tagged=True))
        else:
            readers.append((f.name, _field_reader(f, version, flexible)))
    set_ = object.__setattr__

    def decode(r: Reader) -> Any:
        obj = cls.__new__(cls)
        for name, rd in readers:
            set_(obj, name, rd(r))
        for f in defaults:
            set_(obj, f.name, f.make_default())
        unknown = None
        if flexible:
            n = r.uvarint()
            r.count(n)
            for _ in range(n):
                tag = r.uvarint()
                size = r.uvarint()
                start = r.pos
                payload_end = start + size
                if payload_end > r.end:
                    raise r.fail(f"tagged field {tag} of {size} bytes runs past the end")
                known = tagged.get(tag)
                if known is None:
                    if unknown is None:
                        unknown = {}
                    unknown[tag] = bytes(r.buf[start:payload_end])
                else:
                    saved_end = r.end
                    r.end = payload_end
                    try:
                        set_(obj, known[0], known[1](r))
                    finally:
                        r.end = saved_end
                r.pos = payload_end
        set_(obj, "unknown_tags", unknown)
        return obj

    spec.codecs[key] = decode
    return decode


def struct_encoder(spec: StructSpec, version: int, flexible: bool) -> EncodeFn:
    """The compiled encoder of ``spec`` at ``version`` (cached)."""
    key = ("e", version, flexible)
    fn = spec.codecs.get(key)
    if fn is not None:
        return fn
    writers: list[tuple[str, EncodeFn]] = []
    tagged: list[tuple[int, FieldSpec, EncodeFn]] = []
    for f in spec.fields:
        if not f.in_version(version):
            continue
        if flexible and f.tag is not None:
            tagged.append((f.tag, f, _field_writer(f, version, True, tagged=True)))
        else:
            writers.append((f.name, _field_writer(f, version, flexible)))
    tagged.sort(key=lambda t: t[0])
    sname = spec.name

    def encode(w: Writer, obj: Any) -> None:
        name = "?"
        try:
            for name, wr in writers:
                wr(w, getattr(obj, name))
            if flexible:
                entries: list[tuple[int, bytes]] = []
                for tag, f, wr in tagged:
                    name = f.name
                    v = getattr(obj, name)
                    if v == f.make_default():
                        continue
                    sub = Writer()
                    wr(sub, v)
                    entries.append((tag, sub.getvalue()))
                extra = getattr(obj, "unknown_tags", None)
                if extra:
                    entries.extend((t, bytes(b)) for t, b in extra.items() if t not in {e[0] for e in entries})
                    entries.sort(key=lambda e: e[0])
                w.uvarint(len(entries))
                for tag, payload in entries:
                    w.uvarint(tag)
                    w.uvarint(len(payload))
                    w.raw(payload)
        except EncodeError as e:
            raise EncodeError(f"{sname}.{name}{'' if str(e).startswith('[') else ': '}{e}") from None
        except _ENCODE_FAILURES as e:
            raise EncodeError(f"{sname}.{name}: {e}") from None

    spec.codecs[key] = encode
    return encode


def decode_struct(spec: StructSpec, version: int, flexible: bool, data: Any, *, where: str) -> Any:
    """Decode a whole buffer as ``spec``; trailing bytes are an error."""
    r = Reader(data, where=where)
    obj = decode_with(spec, version, flexible, r)
    if r.pos != r.end:
        raise r.fail(f"{r.end - r.pos} unexpected trailing bytes")
    return obj


def decode_with(spec: StructSpec, version: int, flexible: bool, r: Reader) -> Any:
    """Decode ``spec`` from reader ``r``; any malformed input raises ``DecodeError``."""
    try:
        return struct_decoder(spec, version, flexible)(r)
    except DecodeError as e:
        if e.where is None:
            e.where = r.where
        raise
    except _DECODE_FAILURES as e:
        raise r.fail(f"malformed data ({type(e).__name__}: {e})") from None
    except RecursionError:
        raise r.fail("structure nested too deeply") from None


def encode_struct(spec: StructSpec, version: int, flexible: bool, obj: Any, w: Writer | None = None) -> Writer:
    """Encode ``obj`` as ``spec`` into ``w`` (a new ``Writer`` when omitted) and return the writer."""
    if w is None:
        w = Writer()
    if not isinstance(obj, spec.cls):
        raise EncodeError(f"expected a {spec.name}, got {type(obj).__name__}")
    struct_encoder(spec, version, flexible)(w, obj)
    return w
