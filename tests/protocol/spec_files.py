"""Locate and parse Kafka's JSON message specs in ../shared (reference data; never copied into the project)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

SPEC_DIR = Path(
    os.environ.get("KAFKALOG_SPEC_DIR", Path(__file__).resolve().parents[3] / "shared" / "kafka-protocol-specs")
)

requires_specs = pytest.mark.skipif(
    not SPEC_DIR.is_dir(),
    reason=f"Kafka protocol JSON specs not found at {SPEC_DIR} (set KAFKALOG_SPEC_DIR to check declarations)",
)


def load_spec(name: str) -> dict:
    """Parse ``<name>.json``: the files are JSON with ``//`` line comments."""
    text = (SPEC_DIR / f"{name}.json").read_text()
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


def snake(name: str) -> str:
    """Kafka's CamelCase field names as our snake_case names (``ThrottleTimeMs`` -> ``throttle_time_ms``)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
