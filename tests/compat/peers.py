"""The peers' jars: fetched by Maven from the poms under ``peers/`` into a cache outside git, one folder each.

``python -m tests.compat.peers`` (``make peers``) fetches whatever is missing or stale; the test harness only
reads the cache (``classpath``) and fails naming ``make peers`` when a peer is not there. Layout of the cache
(``$KAFKALOG_PEERS_DIR``, else ``.peers/`` in the repository root)::

    <cache>/<peer>/*.jar        the peer's runtime classpath (mvn dependency:copy-dependencies)
    <cache>/<peer>/.complete    sha-256 of the pom that filled the folder; absent or different: fetch again
    <cache>/<peer>/fetch.log    Maven's output of the last fetch
    <cache>/java/<hash>/        Java drivers compiled by tests.compat.tools.compile_java

Maven goes to the network only for what its local repository (~/.m2) lacks, so once both caches are filled the
fetch and the tests run offline.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
POMS_DIR = REPO_ROOT / "peers"


@dataclass(frozen=True)
class Peer:
    """One peer: its folder name under ``peers/`` (the pom) and in the cache, and what it is for people."""

    name: str
    what: str

    @property
    def pom(self) -> Path:
        return POMS_DIR / self.name / "pom.xml"

    @property
    def dir(self) -> Path:
        return peers_dir() / self.name


KAFKA_39 = Peer("kafka-3.9.1", "Apache Kafka 3.9.1 broker (org.apache.kafka:kafka_2.13:3.9.1, ZooKeeper mode)")
KAFKA_44 = Peer("kafka-4.4.0", "Apache Kafka 4.4.0 broker (org.apache.kafka:kafka_2.13:4.4.0, KRaft)")
TOOLS_44 = Peer("kafka-tools-4.4.0", "Apache Kafka 4.4.0 clients and tools (kafka-clients, kafka-tools 4.4.0)")
SPARK_KAFKA = Peer(
    "spark-sql-kafka-4.2.0", "Spark's Kafka connector (org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0)"
)
SPARK_AVRO = Peer("spark-avro-4.2.0", "Spark's Avro module (org.apache.spark:spark-avro_2.13:4.2.0)")
PEERS = (KAFKA_39, KAFKA_44, TOOLS_44, SPARK_KAFKA, SPARK_AVRO)


class PeerMissingError(RuntimeError):
    """A peer's jars are not in the cache (run ``make peers``)."""


def peers_dir() -> Path:
    """The cache folder: ``$KAFKALOG_PEERS_DIR`` or ``.peers/`` in the repository root."""
    return Path(os.environ.get("KAFKALOG_PEERS_DIR") or REPO_ROOT / ".peers")


def _pom_hash(peer: Peer) -> str:
    return hashlib.sha256(peer.pom.read_bytes()).hexdigest()


def is_complete(peer: Peer) -> bool:
    """Whether the cache holds this peer, filled from its current pom."""
    stamp = peer.dir / ".complete"
    return stamp.is_file() and stamp.read_text().strip() == _pom_hash(peer)


def classpath(peer: Peer) -> str:
    """The peer's classpath (``<dir>/*``) for ``java -cp``; raises PeerMissingError when it was not fetched."""
    if not is_complete(peer):
        raise PeerMissingError(f"{peer.what} is not in {peer.dir}: run `make peers` (fetches it with Maven)")
    return str(peer.dir / "*")


def fetch(peer: Peer) -> None:
    """Fill the peer's cache folder with ``mvn dependency:copy-dependencies`` (the local repository first).

    Raises PeerMissingError with one line naming the peer and Maven's first error when it fails.
    """
    if shutil.which("mvn") is None:
        raise PeerMissingError(f"could not fetch {peer.what}: mvn is not installed")
    staging = peer.dir.with_name(peer.dir.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    cmd = ["mvn", "-B", "-f", str(peer.pom), "dependency:copy-dependencies", "-DincludeScope=runtime"]
    cmd.append(f"-DoutputDirectory={staging}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    (staging / "fetch.log").write_text(f"$ {' '.join(cmd)}\n{output}")
    # A pom missing from the local repository (a jar fetched alone) is only a warning to Maven, which then
    # copies the jar without its dependencies: an incomplete classpath, so a failure here.
    errors = [line for line in output.splitlines() if "[ERROR]" in line or "no dependency information" in line]
    if proc.returncode != 0 or errors:
        first = errors[0].replace("[ERROR]", "").replace("[WARNING]", "").strip() if errors else ""
        raise PeerMissingError(
            f"could not fetch {peer.what} from Maven Central: {first or f'mvn exited {proc.returncode}'} "
            f"(log: {staging}/fetch.log)"
        )
    (staging / ".complete").write_text(_pom_hash(peer) + "\n")
    shutil.rmtree(peer.dir, ignore_errors=True)
    staging.rename(peer.dir)


def main(argv: list[str]) -> int:
    """Fetch the named peers (all by default) that are missing or stale; one line per peer."""
    wanted = [p for p in PEERS if not argv or p.name in argv]
    failed = False
    for peer in wanted:
        if is_complete(peer):
            print(f"peers: {peer.name}: cached in {peer.dir}")
            continue
        try:
            fetch(peer)
        except PeerMissingError as exc:
            print(f"peers: {exc}", file=sys.stderr)
            failed = True
            continue
        print(f"peers: {peer.name}: fetched {len(list(peer.dir.glob('*.jar')))} jars into {peer.dir}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
