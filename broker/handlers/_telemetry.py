"""What the telemetry handlers tell ``ClientTelemetry`` of a request's client (Kafka's
``ClientMetricsInstanceMetadata``): its ``client.id``, the software it named in ApiVersions v3+ (None when it
named none) and the address and port of its connection; and which connection an instance speaks on, so that its
state goes when the connection closes (Kafka's disconnect listener)."""

from __future__ import annotations

import uuid

from broker.api import RequestContext
from broker.telemetry import ClientInfo, ClientTelemetry


def client_info(ctx: RequestContext) -> ClientInfo:
    port = ctx.peer.rsplit(":", 1)[1] if ":" in ctx.peer else None
    return ClientInfo(
        client_id=ctx.header.client_id,
        software_name=ctx.client.name or None,
        software_version=ctx.client.version or None,
        source_address=ctx.client_host,
        source_port=port if port and port.isdigit() else None,
    )


def track_connection(ctx: RequestContext, telemetry: ClientTelemetry, instance_id: uuid.UUID) -> None:
    """Bind ``instance_id`` to the request's connection; the first time, forget it when the connection closes."""
    closed = ctx.disconnected
    if closed is None or closed.done():
        return
    if telemetry.bind_connection(ctx.connection_id, instance_id):
        connection_id = ctx.connection_id
        closed.add_done_callback(lambda _: telemetry.connection_closed(connection_id))
