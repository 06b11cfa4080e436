"""Connections to brokers (Kafka's ``common/network`` and ``NetworkClient``'s connection states).

``connection`` is the sans-IO state machine of one connection (ApiVersions handshake, SASL and KIP-368
re-authentication, correlation ids, in-flight queue, framing), ``versions`` the version negotiation it uses;
``security`` the ``ClientSecurity`` of a client (TLS context, SASL settings); ``socket_transport`` (blocking)
and ``asyncio_transport`` drive it over a socket, TLS-wrapped when the security says so; ``pool`` holds one client's connections, one per
broker, and is the one place they are opened; ``retry`` is the backoff of reconnects and retried
requests (KIP-580). Nothing here knows topics beyond invalidating the metadata a lost broker led.
"""
