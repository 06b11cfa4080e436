"""Launch a standalone ZooKeeper server (a ``java`` child process) from the jars shipped in the pyspark wheel.

``ZooKeeperServer`` writes ``zoo.cfg`` and ``log4j2.properties`` into its data directory and runs
``java -cp <jars> org.apache.zookeeper.server.ZooKeeperServerMain zoo.cfg``. Nothing here imports kazoo or
pyspark (the wheel is located with ``importlib.util.find_spec``, which does not execute it).

Files in ``data_dir``::

    zoo.cfg             the generated server configuration (rewritten at every start)
    log4j2.properties   logging configuration: INFO and above to zookeeper.log, nothing to the console
    zookeeper.log       the server's log
    zookeeper.out       the JVM's own stdout/stderr (crashes, log4j status messages), appended
    version-2/          snapshots and transaction logs (kept across restarts)

Runtime classpath (measured on ZooKeeper 3.9, the minimal set that starts and serves): ``zookeeper``,
``zookeeper-jute``, ``slf4j-api``, ``metrics-core`` (``DefaultMetricsProvider`` summaries),
``snappy-java`` (snapshot naming references ``SnappyInputStream``) and a log4j2 binding (``log4j-api``,
``log4j-core``, ``log4j-slf4j2-impl``). Netty is not needed: the default NIO connection factory serves.

Readiness: ``start`` polls the ``conf`` four-letter word (whitelisted in zoo.cfg) until the reply names this
server's data directory, so a foreign server that happens to own the port is never mistaken for ours.
With ``port=0`` a free port is picked before launch; if another process takes it first (the JVM exits with
``BindException``), a new port is picked, up to ``_BIND_ATTEMPTS`` times. A restart (``stop`` then ``start``)
first tries the port picked before, so clients' connect strings stay valid.

Orphans: on Linux the child is started with ``prctl(PR_SET_PDEATHSIG, SIGTERM)``, so it is terminated when
the thread that started it dies (including a SIGKILL of the parent process). Caveat of that mechanism: the
signal is tied to the *thread* that called ``start``; start the server from a thread that outlives it (the
main thread, as the CLI and test fixtures do). The child also runs in its own session so a terminal's
Ctrl-C reaches only the parent, which then stops the server in order (``run_foreground``).

Concurrency: a ``ZooKeeperServer`` is driven by one thread at a time (``stop`` may be called from another
thread and is idempotent).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from broker.processes import death_signal_preexec, free_port

__all__ = [
    "ZooKeeperError",
    "JavaNotFoundError",
    "ZooKeeperServer",
    "find_java",
    "find_zookeeper_classpath",
    "run_foreground",
    "main",
]

MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"

# (description, alternatives): each entry needs one jar whose name matches one of the alternatives.
_REQUIRED_JARS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ZooKeeper server", (r"zookeeper-\d[\w.\-]*\.jar",)),
    ("ZooKeeper jute", (r"zookeeper-jute-[\w.\-]+\.jar",)),
    ("SLF4J API", (r"slf4j-api-[\w.\-]+\.jar",)),
    ("Dropwizard metrics core", (r"metrics-core-\d[\w.\-]*\.jar",)),
    ("snappy-java", (r"snappy-java-[\w.\-]+\.jar",)),
    ("log4j2 API", (r"log4j-api-\d[\w.\-]*\.jar",)),
    ("log4j2 core", (r"log4j-core-\d[\w.\-]*\.jar",)),
    ("log4j2 SLF4J binding", (r"log4j-slf4j2-impl-[\w.\-]+\.jar", r"log4j-slf4j-impl-[\w.\-]+\.jar")),
)

# Start-up to serving is about 0.55 s (median of 6) on the 2-core dev machine with these options and 0.60 s
# with only -Xmx256m: the JIT/GC choices gain little time; they are here to keep a dev server small (serial
# collector, C1 only, capped heap), since ZooKeeper's throughput needs are tiny for a local cluster.
DEFAULT_JVM_OPTIONS: tuple[str, ...] = (
    "-Xms16m",
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Xshare:auto",
    "-Djava.awt.headless=true",
    "-Dzookeeper.jmx.log4j.disable=true",
)

_BIND_ATTEMPTS = 5


class ZooKeeperError(RuntimeError):
    """The ZooKeeper server could not be located, started or reached."""


class JavaNotFoundError(ZooKeeperError):
    """No ``java`` executable: neither ``$JAVA_HOME/bin/java`` nor ``java`` on ``PATH``."""


# -- locating java and the jars ----------------------------------------------------------------------


def find_java(environ: Mapping[str, str] | None = None) -> str:
    """Path of the ``java`` to run: ``$JAVA_HOME/bin/java`` when JAVA_HOME is set, else ``java`` on PATH."""
    env = os.environ if environ is None else environ
    java_home = env.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
        raise JavaNotFoundError(
            f"JAVA_HOME is set to {java_home!r} but {candidate} is not an executable; "
            f"point JAVA_HOME at a JDK/JRE 8+ or unset it to use java from PATH"
        )
    found = shutil.which("java", path=env.get("PATH", ""))
    if found is None:
        raise JavaNotFoundError(
            "java was not found: the ZooKeeper server needs a Java runtime (8 or newer); "
            "install one (e.g. apt-get install openjdk-17-jre-headless) and put java on "
            "PATH or set JAVA_HOME"
        )
    return found


def _pyspark_jars_dir() -> Path:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ZooKeeperError(
            "pyspark is not installed: the ZooKeeper server runs from the jars in the "
            "pyspark wheel (pip install pyspark), or pass jars_dir"
        )
    return Path(list(spec.submodule_search_locations)[0]) / "jars"


def _version_key(name: str) -> tuple:
    return tuple(int(n) if n.isdigit() else n for n in re.split(r"(\d+)", name))


def find_zookeeper_classpath(jars_dir: str | os.PathLike | None = None) -> str:
    """The minimal classpath (``os.pathsep``-joined jar paths) that runs the ZooKeeper server.

    ``jars_dir`` defaults to the ``jars`` directory of the installed pyspark wheel. Raises ZooKeeperError
    naming the directory and every missing jar.
    """
    directory = Path(jars_dir) if jars_dir is not None else _pyspark_jars_dir()
    if not directory.is_dir():
        raise ZooKeeperError(f"jar directory {directory} does not exist (is the pyspark wheel complete?)")
    names = sorted((p.name for p in directory.iterdir() if p.name.endswith(".jar")), key=_version_key)
    chosen, missing = [], []
    for description, patterns in _REQUIRED_JARS:
        matches = [n for n in names if any(re.fullmatch(pat, n) for pat in patterns)]
        if not matches:
            missing.append(f"{description} ({' or '.join(patterns)})")
        else:
            chosen.append(str(directory / matches[-1]))  # the newest version
    if missing:
        raise ZooKeeperError(f"ZooKeeper jars missing from {directory}: {'; '.join(missing)}")
    return os.pathsep.join(chosen)


# -- the server --------------------------------------------------------------------------------------


def _four_letter_word(host: str, port: int, word: bytes, timeout: float = 1.0) -> bytes:
    """Send a four-letter command and return the whole reply (the server closes after answering)."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(word)
        chunks: list[bytes] = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


class ZooKeeperServer:
    """A standalone ZooKeeper server in a child JVM; a context manager (``with ZooKeeperServer(d) as zk:``).

    ``port=0`` picks a free port. ``tick_time_ms`` is ZooKeeper's tick (the minimum session timeout is two
    ticks; the default 500 ms lets tests use one-second sessions). ``max_client_cnxns`` limits connections
    per client IP (0: unlimited, the useful value for a local cluster). ``force_sync=False`` skips fsync
    per transaction (tests). ``admin_server=True`` enables the Jetty admin server on a free port
    (``admin_port``); its jars are not in pyspark, so it also needs a ``classpath`` that includes Jetty.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike,
        port: int = 0,
        host: str = "127.0.0.1",
        *,
        tick_time_ms: int = 500,
        max_client_cnxns: int = 0,
        admin_server: bool = False,
        max_session_timeout_ms: int = 60_000,
        force_sync: bool = True,
        java: str | None = None,
        classpath: str | None = None,
        jvm_options: Sequence[str] = DEFAULT_JVM_OPTIONS,
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port out of range: {port}")
        if tick_time_ms < 1:
            raise ValueError(f"tick_time_ms must be positive, got {tick_time_ms}")
        if max_client_cnxns < 0:
            raise ValueError(f"max_client_cnxns must be >= 0, got {max_client_cnxns}")
        if max_session_timeout_ms < 2 * tick_time_ms:
            raise ValueError(
                f"max_session_timeout_ms ({max_session_timeout_ms}) is below two ticks ({2 * tick_time_ms})"
            )
        self.data_dir = Path(data_dir).resolve()
        self.host = host
        self._requested_port = port
        self._port = port
        self.tick_time_ms = tick_time_ms
        self.max_client_cnxns = max_client_cnxns
        self.admin_server = admin_server
        self.max_session_timeout_ms = max_session_timeout_ms
        self.force_sync = force_sync
        self._java = java
        self._classpath = classpath
        self._jvm_options = tuple(jvm_options)
        self._process: subprocess.Popen | None = None
        self._stdout_file: IO[bytes] | None = None  # the child's stdout and stderr, open while it runs
        self._lock = threading.Lock()
        self.admin_port: int | None = None
        self.startup_seconds: float | None = None

    # -- properties
    @property
    def port(self) -> int:
        """The client port (the chosen one once started when constructed with 0)."""
        return self._port

    @property
    def connect_string(self) -> str:
        """``host:port`` for ``zookeeper.connect`` (append ``/chroot`` as needed)."""
        return f"{self.host}:{self._port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def log_path(self) -> Path:
        return self.data_dir / "zookeeper.log"

    @property
    def stdout_path(self) -> Path:
        return self.data_dir / "zookeeper.out"

    # -- lifecycle
    def start(self, timeout: float = 30.0) -> ZooKeeperServer:
        """Launch and wait until the server serves; ZooKeeperError (with the log tail) if it cannot."""
        if self.is_running:
            return self
        java = self._java or find_java()
        classpath = self._classpath or find_zookeeper_classpath()
        if self.admin_server and "jetty" not in classpath.lower():
            raise ZooKeeperError(
                "admin_server=True needs Jetty jars on the classpath (pyspark ships none; "
                "ZooKeeper would silently run without it): pass classpath= including them"
            )
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise ZooKeeperError(
                f"ZooKeeper data dir {self.data_dir} is not a directory (it, or a directory above it, is a file)"
            ) from None
        except OSError as e:
            raise ZooKeeperError(f"cannot create ZooKeeper data dir {self.data_dir}: {e.strerror}") from None
        self._write_log_config()
        began = time.monotonic()
        deadline = began + timeout
        attempts = _BIND_ATTEMPTS if self._requested_port == 0 else 1
        for attempt in range(1, attempts + 1):
            if self._requested_port:
                self._port = self._requested_port
            elif not (attempt == 1 and self._port):  # a restart first tries the port it had before
                self._port = free_port(self.host)
            self._write_config()
            self._launch(java, classpath)
            outcome = self._await_serving(deadline)
            if outcome == "serving":
                self.startup_seconds = time.monotonic() - began
                return self
            bind_race = outcome == "exited" and "BindException" in self._log_tail()
            if not (bind_race and attempt < attempts):
                break
        self.stop()
        reason = {"exited": "the server exited", "timeout": f"it did not serve within {timeout:.1f} s"}[outcome]
        if outcome == "exited" and "BindException" in self._log_tail():
            reason = f"port {self._port} on {self.host} is already in use"
        raise ZooKeeperError(
            f"ZooKeeper failed to start: {reason}; data dir {self.data_dir}\n"
            f"--- {self.log_path.name} (tail) ---\n{self._log_tail()}"
            f"--- {self.stdout_path.name} (tail) ---\n{self._tail(self.stdout_path)}"
        )

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, wait up to ``timeout``, then SIGKILL. Idempotent."""
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._stdout_file_close()

    def __enter__(self) -> ZooKeeperServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"running pid={self.pid}" if self.is_running else "stopped"
        return f"ZooKeeperServer({self.connect_string}, {state}, data_dir={str(self.data_dir)!r})"

    def four_letter_word(self, word: str, timeout: float = 2.0) -> str:
        """Send a four-letter command (``srvr``, ``ruok``, ``mntr``, ``cons`` ...) and return the reply."""
        if len(word) != 4:
            raise ValueError(f"four-letter words have four letters: {word!r}")
        return _four_letter_word(self.host, self._port, word.encode("ascii"), timeout).decode("utf-8", "replace")

    # -- internals
    def _write_config(self) -> None:
        lines = [
            f"tickTime={self.tick_time_ms}",
            f"dataDir={self.data_dir}",
            f"clientPort={self._port}",
            f"clientPortAddress={self.host}",
            f"maxClientCnxns={self.max_client_cnxns}",
            f"minSessionTimeout={2 * self.tick_time_ms}",
            f"maxSessionTimeout={self.max_session_timeout_ms}",
            "4lw.commands.whitelist=*",
            "autopurge.snapRetainCount=3",
            "autopurge.purgeInterval=1",
            "preAllocSize=4096",
            f"forceSync={'yes' if self.force_sync else 'no'}",
            f"admin.enableServer={'true' if self.admin_server else 'false'}",
        ]
        if self.admin_server:
            self.admin_port = free_port(self.host)
            lines += [f"admin.serverAddress={self.host}", f"admin.serverPort={self.admin_port}"]
        (self.data_dir / "zoo.cfg").write_text("\n".join(lines) + "\n")

    def _write_log_config(self) -> None:
        (self.data_dir / "log4j2.properties").write_text(
            "status = warn\n"
            "appender.file.type = File\n"
            "appender.file.name = file\n"
            f"appender.file.fileName = {self.log_path}\n"
            "appender.file.layout.type = PatternLayout\n"
            "appender.file.layout.pattern = %d{ISO8601} %-5p [%t] %c{1}: %m%n\n"
            "rootLogger.level = info\n"
            "rootLogger.appenderRef.file.ref = file\n"
        )

    def _launch(self, java: str, classpath: str) -> None:
        self._stdout_file_close()
        self._stdout_file = open(self.stdout_path, "ab")
        command = [
            java,
            *self._jvm_options,
            f"-Dlog4j2.configurationFile={self.data_dir / 'log4j2.properties'}",
            "-cp",
            classpath,
            MAIN_CLASS,
            str(self.data_dir / "zoo.cfg"),
        ]
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        process = subprocess.Popen(
            command,
            cwd=self.data_dir,
            stdin=subprocess.DEVNULL,
            stdout=self._stdout_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=death_signal_preexec(os.getpid()),
        )
        with self._lock:
            self._process = process

    def _await_serving(self, deadline: float) -> str:
        """Poll until serving ("serving"), the child exits ("exited") or the deadline ("timeout")."""
        marker = f"dataDir={self.data_dir}".encode()
        delay = 0.02
        while True:
            process = self._process
            if process is None or process.poll() is not None:
                return "exited"
            try:
                if marker in _four_letter_word(self.host, self._port, b"conf", timeout=0.5):
                    return "serving"
            except OSError:
                pass
            if time.monotonic() >= deadline:
                return "timeout"
            time.sleep(delay)
            delay = min(delay * 1.5, 0.1)

    def _stdout_file_close(self) -> None:
        f = getattr(self, "_stdout_file", None)
        if f is not None:
            f.close()
            self._stdout_file = None

    def _log_tail(self) -> str:
        return self._tail(self.log_path, getattr(self, "_log_offset", 0))

    @staticmethod
    def _tail(path: Path, offset: int = 0, limit: int = 3000) -> str:
        try:
            with open(path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(offset, size - limit))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


# -- CLI helpers -------------------------------------------------------------------------------------


def default_data_dir() -> Path:
    """Where ``kafkalog zookeeper start`` keeps its data without ``--data-dir`` (like Kafka's /tmp/zookeeper)."""
    import tempfile

    return Path(tempfile.gettempdir()) / "kafkalog-zookeeper"


def run_foreground(data_dir: str | os.PathLike, port: int = 2181, host: str = "127.0.0.1") -> int:
    """Run a server until SIGINT/SIGTERM; print ``zookeeper.connect=HOST:PORT`` once serving.

    Returns the process exit status: 0 after a signal, 1 when the server failed to start or died.
    Must be called from the main thread (it installs signal handlers, restored on return).
    """
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    server = ZooKeeperServer(data_dir, port=port, host=host)
    try:
        try:
            server.start()
        except ZooKeeperError as exc:
            print(f"kafkalog zookeeper: error: {exc}", file=sys.stderr, flush=True)
            return 1
        line = f"zookeeper.connect={server.connect_string}"
        try:
            print(line, flush=True)
        except BrokenPipeError:  # stdout closed (`... | head -1`): no reason to stop serving
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            print(
                f"kafkalog: warning: stdout was closed (broken pipe), so this line was not printed there: {line}",
                file=sys.stderr,
                flush=True,
            )
        while not stop.wait(0.5):
            if not server.is_running:
                print(
                    f"kafkalog zookeeper: error: the server exited; see {server.log_path}", file=sys.stderr, flush=True
                )
                return 1
        return 0
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """``kafkalog zookeeper start [--data-dir D] [--port P] [--host H]`` (argv excludes ``zookeeper start``)."""
    parser = argparse.ArgumentParser(
        prog="kafkalog zookeeper start", description="Run a standalone ZooKeeper server in the foreground."
    )
    parser.add_argument(
        "--data-dir",
        default=str(default_data_dir()),
        help="snapshot, transaction log and server log directory (default: %(default)s)",
    )
    parser.add_argument("--port", type=int, default=2181, help="client port; 0 picks a free one (default: 2181)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port out of range: {args.port}")
    return run_foreground(args.data_dir, args.port, args.host)


if __name__ == "__main__":
    sys.exit(main())
