"""The reference system of a benchmark: Apache Kafka run beside kafkalog in the same run (``--reference``)."""

from __future__ import annotations

from typing import Any


def reference_plan(choice: str | None, peer_name: str, **details: Any) -> dict:
    """What a result JSON's ``reference`` says before the run: the system, whether it was asked for and why not.

    ``choice`` is the ``--reference`` option: ``"none"`` skips the reference, ``"kafka"`` demands it (exits naming
    what is missing when ``make peers`` has not fetched the jars), ``None`` runs it when the jars are there.
    ``peer_name`` is a ``tests.compat.peers`` constant (``"KAFKA_39"``, ``"KAFKA_44"``); ``details`` are added to
    a requested plan (JVM options, how the reference was set up)."""
    from tests.compat import peers

    peer = getattr(peers, peer_name)
    plan: dict = {"system": "kafka", "requested": False, "ran": False, "reason": None}
    if choice == "none":
        plan["reason"] = "--reference none"
        return plan
    try:
        peers.classpath(peer)
    except peers.PeerMissingError as exc:
        if choice == "kafka":
            raise SystemExit(f"--reference kafka: {exc}") from None
        plan["reason"] = str(exc)
        return plan
    return plan | {"requested": True, "broker": peer.what, **details}
