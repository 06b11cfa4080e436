"""The broker's side of authentication: per-listener security (``listener_security``) and, later, the
SCRAM credential store and the authorizer. Protocol-level building blocks live in ``spark_kafkalog.security``."""
