"""What the ``kafkalog`` commands do when their stdout is a pipe whose reader went away (``... | head``).

A command that prints data stops with one line ``kafkalog: output stopped: stdout was closed (broken pipe)``
and exit status 1 (``main`` catches the ``BrokenPipeError`` via ``stdout_closed``). A server (``broker start``,
``zookeeper start``, ``cluster up``) prints its one readiness line with ``announce``: a closed stdout is no
reason to stop serving, so it warns once on stderr and goes on.
"""

from __future__ import annotations

import os
import select
import sys

CLOSED_MESSAGE = "output stopped: stdout was closed (broken pipe)"


def stdout_is_closed_pipe() -> bool:
    """Whether stdout is a pipe nobody reads any more (poll reports an error on it): tells a closed
    ``| head`` from a ``BrokenPipeError`` raised by something else (a socket)."""
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (OSError, ValueError):
        return False


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush of what is still buffered is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def warn(message: str) -> None:
    """``kafkalog: <message>`` on stderr; nothing when stderr is closed too."""
    try:
        print(f"kafkalog: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def stdout_closed() -> int:
    """Report a closed stdout once and return the exit status (1)."""
    silence_stdout()
    warn(CLOSED_MESSAGE)
    return 1


def announce(line: str) -> None:
    """Print a server's status ``line`` on stdout; when stdout is closed, warn once and go on serving."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        silence_stdout()
        warn(f"warning: stdout was closed (broken pipe), so this line was not printed there: {line}")
