"""SaslAuthenticate (key 36), v0-2, outside a SASL exchange: ILLEGAL_SASL_STATE.

SaslAuthenticate requests of an exchange are answered by the connection's authenticator
(``broker.network.sasl_authenticator``) and never reach this handler. One that does (on a PLAINTEXT or SSL
listener, or after a successful authentication) gets what Kafka's KafkaApis answers: ILLEGAL_SASL_STATE with
the message "SaslAuthenticate request received after successful authentication".
"""

from __future__ import annotations

from typing import Final

from broker.api import RequestContext
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.sasl_authenticate import SaslAuthenticateRequest, SaslAuthenticateResponse

API_KEY: Final = ApiKey.SASL_AUTHENTICATE
VERSIONS = (0, 2)
_API = API_BY_KEY[API_KEY]


async def handle(ctx: RequestContext, request: SaslAuthenticateRequest) -> SaslAuthenticateResponse:
    return _API.Response(
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
        session_lifetime_ms=0,
    )
