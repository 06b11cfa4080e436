"""Running the `kafkalog` console commands as processes: a run, a line awaited on a child's pipe, a command
that must fail in one line within seconds, a port where nothing listens."""

from __future__ import annotations

import os
import selectors
import socket
import subprocess
import sys
import time

CLI = [sys.executable, "-m", "broker.cli"]
NOT_A_HANG_S = 15  # a correctness bound (no 60 s wait), far above the few seconds these take


def run(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=timeout)


def read_line(proc: subprocess.Popen, prefix: str, timeout: float = 90) -> str:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        while sel.select(timeout):
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith(prefix):
                return line.strip()
    finally:
        sel.close()
    raise AssertionError(
        f"no line starting with {prefix!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
    )


def fails_in_one_line(*args: str, stdin: str | None = None, code: int | None = None) -> str:
    """Run a command that must fail: non-zero exit (``code`` when given), no traceback, within
    ``NOT_A_HANG_S``; returns its one ``kafkalog: ...`` line (a broker may log other lines before it)."""
    started = time.monotonic()
    r = run(*args, stdin=stdin, timeout=60)
    took = time.monotonic() - started
    assert r.returncode != 0 if code is None else r.returncode == code, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("kafkalog:")]
    assert len(lines) == 1, r.stderr
    assert took < NOT_A_HANG_S, f"took {took:.1f} s: {r.stderr}"
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LineReader:
    """Lines of a child's pipe read with ``os.read`` (no buffered reader that would hide lines from select)."""

    def __init__(self, pipe) -> None:
        self.fd = pipe.fileno()
        self.buffer = b""

    def next_line(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            with selectors.DefaultSelector() as sel:
                sel.register(self.fd, selectors.EVENT_READ)
                if not sel.select(remaining):
                    return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode(errors="replace").strip()

    def wait_for(self, matches, timeout: float = 90) -> str:
        deadline = time.monotonic() + timeout
        while (line := self.next_line(max(0.0, deadline - time.monotonic()))) is not None:
            if matches(line):
                return line
        raise AssertionError(f"no matching line within {timeout} s")
