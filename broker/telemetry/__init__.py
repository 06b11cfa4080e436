"""Client telemetry (KIP-714): client metrics subscriptions (``subscriptions``), the OTLP metrics reader
(``otlp``), the broker's client instances and pushed metrics (``store``), their Prometheus exposition
(``prometheus``) and the subscriptions kept current from the registry (``sync``)."""

from .store import ClientInfo, ClientTelemetry

__all__ = ["ClientInfo", "ClientTelemetry"]
