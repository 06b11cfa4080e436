"""Regenerate golden_bytes.json from kafka-python's encoders (the independent source of the bytes).

Run ``python -m tests.protocol.make_golden`` only when GOLDEN_CASES or the sample filler change; the
test then checks that our codec produces and reads exactly these bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

from spark_kafkalog.protocol import API_BY_KEY

from .golden_cases import GOLDEN_CASES
from .kafka_python_oracle import build, message_class, oracle_sample
from .strategies import sample

CORRELATION_ID = 0x01020304
CLIENT_ID = "golden-client"
GOLDEN_FILE = Path(__file__).with_name("golden_bytes.json")


def api_by_name(name: str):
    return next(a for a in API_BY_KEY.values() if a.name == name)


def golden_sample(name: str, kind: str, version: int):
    """The deterministic sample of ``<name><Kind>`` at ``version`` that the golden bytes encode."""
    api = api_by_name(name)
    spec = api.request if kind == "request" else api.response
    return oracle_sample(name + kind.title(), sample(spec, version))


def kafka_python_frames(name: str, version: int) -> dict[str, str]:
    api = api_by_name(name)
    out = {}
    for kind, spec in (("request", api.request), ("response", api.response)):
        body = golden_sample(name, kind, version)
        msg = build(message_class(name + kind.title()), spec, body.to_dict(), version=version)
        if kind == "request":
            msg.with_header(correlation_id=CORRELATION_ID, client_id=CLIENT_ID)
        else:
            msg.with_header(correlation_id=CORRELATION_ID)
        out[kind] = bytes(msg.encode(header=True)).hex()  # version set at construction
    return out


def main() -> None:
    golden = {f"{name}/v{version}": kafka_python_frames(name, version) for name, version in GOLDEN_CASES}
    GOLDEN_FILE.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(golden)} cases to {GOLDEN_FILE}")


if __name__ == "__main__":
    main()
