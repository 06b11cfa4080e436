"""Requests and responses as whole frames: headers plus bodies, for every declared API and version.

Request header (``RequestHeader.json``)::

    v0: api_key int16 | api_version int16 | correlation_id int32
    v1: v0 | client_id nullable string (int16 length, never compact)
    v2: v1 | tag buffer

Response header: v0 = correlation_id int32; v1 = v0 + tag buffer. A request uses header v2 when its
version is flexible, else v1 (v0 belonged to ControlledShutdown v0 only, which we do not declare). A
response uses header v1 when flexible, else v0, except ApiVersions whose response header is always v0.

Frames on the wire are ``int32 size`` + header + body; ``framing.py`` cuts a byte stream into frames, and
the functions here take and return frame *payloads* (without the size) unless ``framed=True``.
Pure functions; safe to call from any thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .api_keys import ApiKey
from .apis import API_BY_KEY, DATA_BY_NAME
from .codec import decode_with, encode_struct
from .exceptions import DecodeError, UnsupportedVersionError
from .primitives import INT32, Reader, SendBuffer, Writer
from .schema import ApiSpec


@dataclass
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None
    unknown_tags: dict[int, bytes] | None = field(default=None, compare=False)


@dataclass
class Request:
    """A decoded request: header, API spec and body (an instance of ``api.Request``)."""

    header: RequestHeader
    api: ApiSpec
    body: Any

    @property
    def version(self) -> int:
        return self.header.api_version


def api_spec(api_key: int) -> ApiSpec:
    """The declaration of ``api_key``; ``UnsupportedVersionError`` when we do not declare it."""
    spec = API_BY_KEY.get(api_key)
    if spec is None:
        name = ApiKey(api_key).name if api_key in ApiKey._value2member_map_ else str(api_key)
        raise UnsupportedVersionError(f"API {name} is not declared")
    return spec


def _check_version(spec: ApiSpec, version: int) -> None:
    if version not in spec.versions:
        raise UnsupportedVersionError(f"{spec.name} v{version} is outside the declared range {spec.versions}")


def _skip_tags(r: Reader) -> dict[int, bytes] | None:
    n = r.count(r.uvarint())
    out = None
    for _ in range(n):
        tag = r.uvarint()
        size = r.uvarint()
        if out is None:
            out = {}
        out[tag] = bytes(r.raw(size))
    return out


def _write_tags(w: Writer, tags: dict[int, bytes] | None) -> None:
    if not tags:
        w.uvarint(0)
        return
    w.uvarint(len(tags))
    for tag in sorted(tags):
        w.uvarint(tag)
        w.uvarint(len(tags[tag]))
        w.raw(tags[tag])


# requests ----------------------------------------------------------------------------------------
def _request_writer(
    spec: ApiSpec, version: int, correlation_id: int, body: Any, client_id: str | None, framed: bool
) -> Writer:
    flexible = spec.is_flexible(version)
    w = Writer()
    if framed:
        w.int32(0)
    w.int16(spec.key)
    w.int16(version)
    w.int32(correlation_id)
    w.nullable_string(client_id)
    if flexible:
        w.uvarint(0)
    encode_struct(spec.request, version, flexible, body, w)
    return w


def encode_request(
    api_key: int,
    version: int,
    correlation_id: int,
    body: Any,
    *,
    client_id: str | None = None,
    framed: bool = False,
) -> bytes | bytearray:
    """Header plus body of a request (with the int32 size prefix when ``framed``).

    A framed request is returned as the encoder's own ``bytearray``, its size written in place: a produce
    request's record batches are copied once (into the encoder), not four times."""
    spec = api_spec(api_key)
    _check_version(spec, version)
    w = _request_writer(spec, version, correlation_id, body, client_id, framed)
    if framed and len(w) == len(w.buf):  # everything is in the encoder's buffer (no opaque regions)
        INT32.pack_into(w.buf, 0, len(w.buf) - 4)
        return w.buf
    data = w.getvalue()
    if framed:
        data = INT32.pack(len(data) - 4) + data[4:]
    return data


def encode_request_chunks(
    api_key: int, version: int, correlation_id: int, body: Any, *, client_id: str | None = None
) -> list[Any]:
    """A framed request as buffers to send in order (``socket.sendmsg``): the encoder's bytes, and the
    memory of every ``SendBuffer`` in its ``records`` fields, which is not copied. The first chunk starts with
    the int32 size of the whole frame payload; a request without ``SendBuffer``s is one chunk."""
    spec = api_spec(api_key)
    _check_version(spec, version)
    w = _request_writer(spec, version, correlation_id, body, client_id, framed=True)
    if len(w) == len(w.buf):
        INT32.pack_into(w.buf, 0, len(w.buf) - 4)
        return [w.buf]
    size = len(w) - 4
    chunks = [part.view if isinstance(part, SendBuffer) else part for part in w.parts()]
    chunks[0] = INT32.pack(size) + chunks[0][4:]
    return chunks


def decode_request_header(frame: Any) -> tuple[RequestHeader, Reader]:
    """Decode the header of a request frame; return it and a reader positioned at the body.

    For an API we declare, a flexible version's tag buffer is consumed too. For an unknown API or
    version only the fixed part and ``client_id`` are read (enough to answer with an error): the
    returned reader then points at what follows ``client_id``.
    """
    r = Reader(frame, where="request header")
    try:
        header = RequestHeader(r.int16(), r.int16(), r.int32())
        header.client_id = r.nullable_string()
        spec = API_BY_KEY.get(header.api_key)
        if spec is not None and header.api_version in spec.versions and spec.is_flexible(header.api_version):
            header.unknown_tags = _skip_tags(r)
    except DecodeError:
        raise
    except (ValueError, IndexError) as e:
        raise r.fail(f"malformed request header ({e})") from None
    return header, r


def decode_request(frame: Any) -> Request:
    """Decode a whole request frame payload.

    Raises ``UnsupportedVersionError`` (with ``.header`` set) for an API or version we do not declare,
    so a server can still answer (ApiVersions needs a v0 error body), and ``DecodeError`` for anything
    malformed. Bytes after a complete body are ignored (see below).
    """
    header, r = decode_request_header(frame)
    spec = API_BY_KEY.get(header.api_key)
    if spec is None or header.api_version not in spec.versions:
        err = UnsupportedVersionError(
            f"{spec.name if spec else 'API key ' + str(header.api_key)} v{header.api_version} is not supported"
        )
        err.header = header  # type: ignore[attr-defined]
        raise err
    r.where = f"{spec.name} v{header.api_version} request"
    body = decode_with(spec.request, header.api_version, spec.is_flexible(header.api_version), r)
    # Bytes after the body are ignored, as Kafka's brokers ignore them (its request parsers read the fields
    # they know and never check for a remainder): librdkafka 2.x ends AlterUserScramCredentials v0 with one
    # empty tagged-field section too many, and Kafka accepts it.
    return Request(header, spec, body)


# responses ---------------------------------------------------------------------------------------
def _response_writer(spec: ApiSpec, version: int, correlation_id: int, body: Any, framed: bool) -> Writer:
    _check_version(spec, version)
    flexible = spec.is_flexible(version)
    w = Writer()
    if framed:
        w.int32(0)  # patched by the caller once the size is known
    w.int32(correlation_id)
    if spec.response_header_version(version) >= 1:
        w.uvarint(0)
    encode_struct(spec.response, version, flexible, body, w)
    return w


def encode_response(api_key: int, version: int, correlation_id: int, body: Any, *, framed: bool = False) -> bytes:
    """Header plus body of a response as one bytes object (record data must be bytes-like)."""
    w = _response_writer(api_spec(api_key), version, correlation_id, body, framed)
    data = w.getvalue()
    if framed:
        data = INT32.pack(len(data) - 4) + data[4:]
    return data


def encode_response_parts(api_key: int, version: int, correlation_id: int, body: Any) -> list[Any]:
    """A framed response as chunks: ``bytes`` and the opaque regions found in ``records`` fields.

    The first chunk starts with the int32 size of the whole frame payload.
    """
    w = _response_writer(api_spec(api_key), version, correlation_id, body, framed=True)
    parts = w.parts()
    size = len(w) - 4
    first = parts[0]
    parts[0] = INT32.pack(size) + first[4:]
    return parts


def decode_response_header(frame: Any, api_key: int, version: int) -> tuple[int, Reader]:
    """Correlation id of a response frame payload and a reader positioned at its body."""
    spec = api_spec(api_key)
    r = Reader(frame, where=f"{spec.name} v{version} response header")
    correlation_id = r.int32()
    if spec.response_header_version(version) >= 1:
        _skip_tags(r)
    return correlation_id, r


def decode_response(api_key: int, version: int, frame: Any) -> tuple[int, Any]:
    """Decode a whole response frame payload into (correlation id, body)."""
    spec = api_spec(api_key)
    _check_version(spec, version)
    correlation_id, r = decode_response_header(frame, api_key, version)
    r.where = f"{spec.name} v{version} response"
    body = decode_with(spec.response, version, spec.is_flexible(version), r)
    if r.pos != r.end:
        raise r.fail(f"{r.end - r.pos} unexpected trailing bytes")
    return correlation_id, body


def peek_correlation_id(frame: Any) -> int:
    """The correlation id at the start of a response frame payload."""
    if len(frame) < 4:
        raise DecodeError("response shorter than its correlation id", position=0)
    return INT32.unpack_from(frame, 0)[0]


# versioned data payloads (consumer protocol subscription and assignment) ----------------------------
def encode_data(name: str, version: int, value: Any) -> bytes:
    """``int16 version`` followed by ``value`` encoded at that version (e.g. JoinGroup protocol metadata)."""
    spec = DATA_BY_NAME[name]
    if version not in spec.versions:
        raise UnsupportedVersionError(f"{name} v{version} is outside the declared range {spec.versions}")
    flexible = spec.flexible is not None and version in spec.flexible
    w = Writer()
    w.int16(version)
    return encode_struct(spec.struct, version, flexible, value, w).getvalue()


def decode_data(name: str, data: Any) -> tuple[int, Any]:
    """(version, value) of a versioned payload.

    A version newer than we declare is read with our newest declaration: later versions only append
    fields, so the known prefix is valid (Kafka's ConsumerProtocol reads them the same way); the
    unknown tail is ignored. A version below our range is a ``DecodeError``.
    """
    spec = DATA_BY_NAME[name]
    r = Reader(data, where=name)
    version = r.int16()
    if version < spec.versions.lo:
        raise r.fail(f"unsupported {name} version {version}", 0)
    read_as = min(version, spec.versions.hi)
    flexible = spec.flexible is not None and read_as in spec.flexible
    value = decode_with(spec.struct, read_as, flexible, r)
    if read_as == version and r.pos != r.end:
        raise r.fail(f"{r.end - r.pos} unexpected trailing bytes")
    return version, value
