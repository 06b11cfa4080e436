"""Render docs/protocol.md, the protocol coverage table, from the declarations.

``python -m spark_kafkalog.protocol.coverage > docs/protocol.md`` (``make docs``); a test fails when the
committed file differs from what this prints.
"""

from __future__ import annotations

import sys
from importlib import import_module

from .apis import _API_MODULES, _DATA_MODULES, API_BY_KEY, DATA_BY_NAME


def _summary(module_name: str) -> str:
    doc = import_module(f"{__package__}.apis.{module_name}").__doc__ or ""
    lines = [line.strip() for line in doc.strip().splitlines() if line.strip()]
    return " ".join(lines[1:]) if len(lines) > 1 else ""


def render() -> str:
    by_module = {import_module(f"{__package__}.apis.{m}").API.key: m for m in _API_MODULES}
    out = [
        "# Protocol coverage",
        "",
        "Generated from `spark_kafkalog/protocol/apis/` by `python -m spark_kafkalog.protocol.coverage`",
        '(`make docs`); `tests/protocol/test_docs.py` fails when this file is stale. "Declared" means the',
        "codec encodes and decodes requests and responses at those versions; which versions the broker",
        "advertises in ApiVersions is decided by its handler registry.",
        "",
        "| API | key | declared versions | flexible versions | notes |",
        "|---|---|---|---|---|",
    ]
    for key in sorted(API_BY_KEY):
        api = API_BY_KEY[key]
        flex = api.flexible.intersect(api.versions) if api.flexible else None
        out.append(f"| {api.name} | {key} | {api.versions} | {flex if flex else 'none'} | {_summary(by_module[key])} |")
    out += [
        "",
        "Versioned payloads (int16 version prefix, carried as opaque bytes inside JoinGroup and SyncGroup):",
        "",
        "| payload | declared versions | flexible versions |",
        "|---|---|---|",
    ]
    for name in _DATA_MODULES:
        data = DATA_BY_NAME[import_module(f"{__package__}.apis.{name}").DATA.name]
        flex = data.flexible.intersect(data.versions) if data.flexible else None
        out.append(f"| {data.name} | {data.versions} | {flex if flex else 'none'} |")
    out += [
        "",
        "Headers: request header v1 (non-flexible versions) and v2 (flexible), with `client_id` always an",
        "int16-length nullable string; response header v0 and v1, except ApiVersions which always answers",
        "with header v0.",
        "",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render())
