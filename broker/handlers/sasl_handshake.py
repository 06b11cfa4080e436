"""SaslHandshake (key 17), v0-1, on a connection that needs no SASL exchange: ILLEGAL_SASL_STATE.

The SASL exchange itself never reaches the handlers: on SASL_PLAINTEXT and SASL_SSL listeners the connection's
authenticator (``broker.network.sasl_authenticator``) answers SaslHandshake before authentication and when it
starts a KIP-368 re-authentication. What does reach this handler (any SaslHandshake on a PLAINTEXT or SSL
listener; one on an authenticated SASL connection that may not re-authenticate now) is answered as Kafka's
KafkaApis does: ILLEGAL_SASL_STATE with no mechanisms.
"""

from __future__ import annotations

from typing import Final

from broker.api import RequestContext
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse

API_KEY: Final = ApiKey.SASL_HANDSHAKE
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]


async def handle(ctx: RequestContext, request: SaslHandshakeRequest) -> SaslHandshakeResponse:
    return _API.Response(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
