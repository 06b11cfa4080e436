"""What the telemetry handlers tell ``ClientTelemetry`` of a request's client (Kafka's
``ClientMetricsInstanceMetadata``): its ``client.id``, the software it named in ApiVersions v3+ (None when it
named none) and the address and port of its connection."""

from __future__ import annotations

from broker.api import RequestContext
from broker.telemetry import ClientInfo


def client_info(ctx: RequestContext) -> ClientInfo:
    port = ctx.peer.rsplit(":", 1)[1] if ":" in ctx.peer else None
    return ClientInfo(
        client_id=ctx.header.client_id,
        software_name=ctx.client.name or None,
        software_version=ctx.client.version or None,
        source_address=ctx.client_host,
        source_port=port if port and port.isdigit() else None,
    )
