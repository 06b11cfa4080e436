"""Type-checking a snippet of code with mypy, as a test: what it reveals and rejects, line by line."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mypy import api as mypy_api

ROOT = Path(__file__).resolve().parents[1]


def mypy_lines(tmp_path: Path, source: str) -> tuple[list[str], int]:
    """mypy's notes and errors for ``source`` (dedented), each as ``"<line>: note|error: ..."``, and its exit
    status. The project is found by ``mypy_path``; imported modules are checked silently, with a fresh cache."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent(source))
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {ROOT}\nfollow_imports = silent\ncache_dir = {tmp_path / 'cache'}\n")
    out, err, status = mypy_api.run(["--config-file", str(config), str(snippet)])
    prefix = f"{snippet}:"
    lines = [line[len(prefix) :] for line in out.splitlines() if line.startswith(prefix)]
    assert lines or status == 0, out + err
    return lines, status
