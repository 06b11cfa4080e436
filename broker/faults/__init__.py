"""Fault injection on the request path of a broker: pushed error codes (whole requests or single partitions),
response delays, dropped or delayed connections, request tracking; in process (``EmbeddedBroker.faults``) or
through a broker process's loopback control channel (``EmbeddedCluster.faults(id)`` -> ``RemoteFaults``).

    with broker.faults.push_errors("Produce", ["NOT_LEADER_OR_FOLLOWER"] * 2):
        producer.send("events", b"v").get()   # retried twice, then written once

See docs/fault-injection.md; ``injector`` holds the contract, ``error_responses`` how error answers are built
from the declared schemas, ``control`` the control channel.
"""

from .control import FaultControlError, FaultControlServer, RemoteFaults, RemoteInjection, RemoteRequestLog
from .error_responses import error_response, merge_responses, partition_error_response, split_request
from .injector import FaultInjector, Injection, RequestLog
from .rules import TrackedRequest, resolve_api, resolve_error

__all__ = [
    "FaultControlError",
    "FaultControlServer",
    "FaultInjector",
    "Injection",
    "RemoteFaults",
    "RemoteInjection",
    "RemoteRequestLog",
    "RequestLog",
    "TrackedRequest",
    "error_response",
    "merge_responses",
    "partition_error_response",
    "resolve_api",
    "resolve_error",
    "split_request",
]
