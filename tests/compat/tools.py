"""Apache Kafka's command-line tools by class name, and small Java drivers compiled against Kafka's clients.

``run_tool("kafka-topics", "--bootstrap-server", b, "--list")`` runs the tool's main class (the shell script
of Kafka's distribution only sets the classpath and calls it) on the Kafka 4.4 clients+tools classpath and
returns the finished process (text stdout/stderr). ``compile_java(source)`` compiles one Java file with
``javac`` into ``<peers cache>/java/<hash of source and classpath>/`` (reused when present) and
``run_java(classes, "Main", *args)`` runs it on the same classpath.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

from broker.cluster.zookeeper_server import find_java

from .peers import TOOLS_44, classpath, peers_dir

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
}


class ToolError(AssertionError):
    """A tool or driver exited non-zero where the test expected success (its output in the message)."""


def _java(cp: str, main_class: str, args: tuple[str, ...]) -> list[str]:
    return [find_java(), *JVM_OPTIONS, "-cp", cp, main_class, *args]


def _run(cmd: list[str], what: str, input: str | None, timeout_s: float, check: bool) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout_s)
    if check and proc.returncode != 0:
        raise ToolError(f"{what} exited {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc


def run_tool(
    tool: str, *args: str, input: str | None = None, timeout_s: float = 120.0, check: bool = True
) -> subprocess.CompletedProcess:
    """Run Kafka 4.4's ``tool`` (a script name of TOOL_CLASSES, or a main class) with ``args``."""
    main_class = TOOL_CLASSES.get(tool, tool)
    return _run(_java(classpath(TOOLS_44), main_class, args), f"{tool} {' '.join(args)}", input, timeout_s, check)


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
    classes: Path, main_class: str, *args: str, input: str | None = None, timeout_s: float = 180.0, check: bool = True
) -> subprocess.CompletedProcess:
    """Run a compiled driver's ``main_class`` on Kafka 4.4's clients classpath."""
    cp = f"{classes}:{classpath(TOOLS_44)}"
    return _run(_java(cp, main_class, args), f"{main_class} {' '.join(args)}", input, timeout_s, check)
