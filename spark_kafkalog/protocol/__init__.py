"""The Kafka wire protocol, sans-IO: primitives, declarations of every API we speak, one codec, framing.

Shared by the broker and the client; imports only the standard library (no pyspark, no kazoo, no I/O).

    from spark_kafkalog.protocol import API_BY_KEY, ApiKey, encode_request, decode_request
"""

from .api_keys import ApiKey
from .apis import API_BY_KEY, DATA_BY_NAME
from .errors import ErrorCode, KafkaError, error_info
from .exceptions import DecodeError, EncodeError, FrameTooLargeError, ProtocolError, UnsupportedVersionError
from .framing import DEFAULT_MAX_FRAME_SIZE, FrameDecoder, frame
from .messages import (
    Request,
    RequestHeader,
    api_spec,
    decode_data,
    decode_request,
    decode_request_header,
    decode_response,
    decode_response_header,
    encode_data,
    encode_request,
    encode_request_chunks,
    encode_response,
    encode_response_parts,
    peek_correlation_id,
)
from .primitives import SendBuffer
from .schema import ApiSpec, DataSpec, Message, VersionRange

__all__ = [
    "API_BY_KEY",
    "DATA_BY_NAME",
    "DEFAULT_MAX_FRAME_SIZE",
    "ApiKey",
    "ApiSpec",
    "DataSpec",
    "DecodeError",
    "EncodeError",
    "ErrorCode",
    "FrameDecoder",
    "FrameTooLargeError",
    "KafkaError",
    "Message",
    "ProtocolError",
    "Request",
    "RequestHeader",
    "SendBuffer",
    "UnsupportedVersionError",
    "VersionRange",
    "api_spec",
    "decode_data",
    "encode_data",
    "decode_request",
    "decode_request_header",
    "decode_response",
    "decode_response_header",
    "encode_request",
    "encode_request_chunks",
    "encode_response",
    "encode_response_parts",
    "error_info",
    "frame",
    "peek_correlation_id",
]
