"""The peers cache without Maven or Java: where it lives, when a peer counts as fetched, what a failure says.

Not marked compat: these run in the default suite (a fake ``mvn`` on PATH stands in for Maven).
"""

from __future__ import annotations

import os
import stat

import pytest

from tests.compat import peers
from tests.compat.peers import PEERS, Peer, PeerMissingError


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKALOG_PEERS_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(peers, "POMS_DIR", tmp_path / "poms")
    monkeypatch.setattr(peers, "PEERS", (Peer("kafka-x", "X"),))
    (tmp_path / "poms" / "kafka-x").mkdir(parents=True)
    (tmp_path / "poms" / "kafka-x" / "pom.xml").write_text("<project/>")
    return tmp_path


def fake_mvn(directory, script: str) -> None:
    """A ``mvn`` on PATH that runs ``script`` (bash; its arguments in "$@")."""
    bin_dir = directory / "bin"
    bin_dir.mkdir(exist_ok=True)
    mvn = bin_dir / "mvn"
    mvn.write_text("#!/bin/bash\n" + script)
    mvn.chmod(mvn.stat().st_mode | stat.S_IEXEC)
    os.environ["PATH"] = f"{bin_dir}:{os.environ['PATH']}"


def test_every_peer_has_its_pom_in_the_repository():
    assert [p.name for p in PEERS if not p.pom.is_file()] == []
    assert len(PEERS) == 5


def test_the_cache_is_kafkalog_peers_dir_when_set(cache):
    assert Peer("kafka-x", "X").dir == cache / "cache" / "kafka-x"


def test_a_peer_not_fetched_fails_naming_make_peers(cache):
    with pytest.raises(PeerMissingError, match=r"X is not in .*kafka-x: run `make peers`"):
        peers.classpath(Peer("kafka-x", "X"))


def test_a_fetch_fills_the_folder_and_stamps_it_with_the_pom(cache, monkeypatch):
    monkeypatch.setenv("PATH", os.environ["PATH"])
    fake_mvn(cache, 'for a in "$@"; do case $a in -DoutputDirectory=*) touch "${a#*=}/a-1.0.jar";; esac; done\n')
    peer = Peer("kafka-x", "X")
    assert peers.main(["kafka-x"]) == 0
    assert peers.classpath(peer) == str(peer.dir / "*") and (peer.dir / "a-1.0.jar").is_file()
    (cache / "poms" / "kafka-x" / "pom.xml").write_text("<project><!-- changed --></project>")
    assert not peers.is_complete(peer)  # a changed pom means fetch again


def test_maven_unreachable_is_one_line_naming_the_peer(cache, monkeypatch, capsys):
    monkeypatch.setenv("PATH", os.environ["PATH"])
    fake_mvn(
        cache, 'echo "[INFO] Scanning"; echo "[ERROR] Failed to collect dependencies: Network is unreachable"\nexit 1\n'
    )
    assert peers.main(["kafka-x"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("peers: could not fetch X from Maven Central: Failed to collect dependencies: Network")
    assert not peers.is_complete(Peer("kafka-x", "X"))


def test_a_jar_without_its_pom_is_an_incomplete_fetch(cache, monkeypatch):
    monkeypatch.setenv("PATH", os.environ["PATH"])
    fake_mvn(cache, 'echo "[WARNING] The POM for a:b:jar:1 is missing, no dependency information available"\n')
    with pytest.raises(PeerMissingError, match="no dependency information"):
        peers.fetch(Peer("kafka-x", "X"))
