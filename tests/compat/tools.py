"""Apache Kafka's command-line tools by class name, and small Java drivers compiled against Kafka's clients.

``run_tool("kafka-topics", "--bootstrap-server", b, "--list")`` runs the tool's main class (the shell script
of Kafka's distribution only sets the classpath and calls it) on the Kafka 4.4 clients+tools classpath and
returns the finished process (text stdout/stderr). ``compile_java(source)`` compiles one Java file with
``javac`` into ``<peers cache>/java/<hash of source and classpath>/`` (reused when present) and
``run_java(classes, "Main", *args)`` runs it on the same classpath.

Both take ``peer=KAFKA_39`` to run on Apache Kafka 3.9.1's classpath instead (its kafka-clients 3.9.1 and the
tools of its core jar, ``TOOL_CLASSES_39``; a driver compiled against 4.4 runs there when it uses only API
that 3.9 has). Kafka 3.9 logs through reload4j: its tools get ``TOOLS_LOG4J_39`` (WARN and up on stderr).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

from broker.cluster.zookeeper_server import find_java

from .peers import KAFKA_39, TOOLS_44, Peer, classpath, peers_dir

JVM_OPTIONS = (
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",  # the tools' own output only, not the client's INFO logs
)

# Kafka 4.4's scripts (bin/<name>.sh) and the main class each runs (kafka-tools unless noted).
TOOL_CLASSES = {
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-configs": "org.apache.kafka.tools.ConfigCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-broker-api-versions": "org.apache.kafka.tools.BrokerApiVersionsCommand",
}

# The tools Kafka 3.9.1's core jar (kafka_2.13) still carries, by script name: the others moved to kafka-tools,
# which the 3.9.1 peer does not fetch.
TOOL_CLASSES_39 = {
    "kafka-console-producer": "kafka.tools.ConsoleProducer",
    "kafka-configs": "kafka.admin.ConfigCommand",
}

# reload4j's configuration for Kafka 3.9's tools and clients: WARN and up on stderr, like Kafka's
# config/tools-log4j.properties.
TOOLS_LOG4J_39 = (
    "log4j.rootLogger=WARN, stderr\n"
    "log4j.appender.stderr=org.apache.log4j.ConsoleAppender\n"
    "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"
    "log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
    "log4j.appender.stderr.Target=System.err\n"
)


class ToolError(AssertionError):
    """A tool or driver exited non-zero where the test expected success (its output in the message)."""


def _java(cp: str, main_class: str, args: tuple[str, ...], peer: Peer = TOOLS_44) -> list[str]:
    return [find_java(), *JVM_OPTIONS, *_logging_options(peer), "-cp", cp, main_class, *args]


def _logging_options(peer: Peer) -> list[str]:
    """Kafka 3.9 (reload4j) needs a logging configuration file; Kafka 4.4's classpath logs as JVM_OPTIONS say."""
    if peer is not KAFKA_39:
        return []
    config = peers_dir() / "java" / "tools-log4j-3.9.properties"
    if not config.is_file() or config.read_text() != TOOLS_LOG4J_39:
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(TOOLS_LOG4J_39)
    return [f"-Dlog4j.configuration=file:{config}"]


def _run(cmd: list[str], what: str, input: str | None, timeout_s: float, check: bool) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout_s)
    if check and proc.returncode != 0:
        raise ToolError(f"{what} exited {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc


def run_tool(
    tool: str,
    *args: str,
    input: str | None = None,
    timeout_s: float = 120.0,
    check: bool = True,
    peer: Peer = TOOLS_44,
) -> subprocess.CompletedProcess:
    """Run Kafka 4.4's ``tool`` (a script name of TOOL_CLASSES, or a main class) with ``args``.

    ``peer=KAFKA_39``: Kafka 3.9.1's tool instead (a script name of TOOL_CLASSES_39, or a main class).
    """
    main_class = (TOOL_CLASSES_39 if peer is KAFKA_39 else TOOL_CLASSES).get(tool, tool)
    cmd = _java(classpath(peer), main_class, args, peer)
    return _run(cmd, f"{tool} {' '.join(args)}", input, timeout_s, check)


def compile_java(source: str) -> Path:
    """Compile one Java source (its public class names the file) against Kafka 4.4's clients; cached by hash."""
    match = re.search(r"public\s+(?:final\s+)?class\s+(\w+)", source)
    if match is None:
        raise ValueError("the Java source declares no public class")
    cp = classpath(TOOLS_44)
    jars = sorted(p.name for p in TOOLS_44.dir.glob("*.jar"))
    digest = hashlib.sha256((source + "\n".join(jars)).encode()).hexdigest()[:16]
    out = peers_dir() / "java" / f"{match.group(1)}-{digest}"
    if (out / ".complete").is_file():
        return out
    src = out / "src" / f"{match.group(1)}.java"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(source)
    javac = str(Path(find_java()).with_name("javac"))
    cmd = [javac, "-nowarn", "-encoding", "UTF-8", "-cp", cp, "-d", str(out), str(src)]
    _run(cmd, f"javac {src.name}", None, 180.0, True)
    (out / ".complete").write_text(digest + "\n")
    return out


def run_java(
    classes: Path,
    main_class: str,
    *args: str,
    input: str | None = None,
    timeout_s: float = 180.0,
    check: bool = True,
    peer: Peer = TOOLS_44,
) -> subprocess.CompletedProcess:
    """Run a compiled driver's ``main_class`` on Kafka 4.4's clients classpath (``peer=KAFKA_39``: 3.9.1's)."""
    cp = f"{classes}:{classpath(peer)}"
    return _run(_java(cp, main_class, args, peer), f"{main_class} {' '.join(args)}", input, timeout_s, check)
