"""Helpers for the child processes kafkalog starts (ZooKeeper, brokers): free ports and parent-death signals."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys

_PR_SET_PDEATHSIG = 1


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago (the caller must still handle a bind race)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def death_signal_preexec(parent_pid: int):
    """A ``preexec_fn`` asking Linux to SIGTERM the child when the thread that started it dies; no-op elsewhere.

    The signal follows the *thread* that forks: start long-lived children from a long-lived thread.
    """
    prctl = None
    if sys.platform.startswith("linux"):
        try:
            prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved before fork: the child only calls it
        except (OSError, AttributeError):
            prctl = None

    def preexec() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
            if os.getppid() != parent_pid:  # the parent died before prctl took effect
                os._exit(1)

    return preexec
