"""The machine a benchmark ran on, recorded next to its figures in every results JSON."""

from __future__ import annotations

import datetime
import os
import platform
from collections.abc import Iterable
from importlib import metadata


def machine_info(packages: Iterable[str] = ()) -> dict:
    """Python, platform, CPU model and count, versions of ``packages`` (None when not installed), UTC date."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    versions = {}
    for package in packages:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "packages": versions,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
