"""Spark's Python workers on the interpreter that has this package: run at interpreter start-up by
``kafkalog-pyspark-python.pth`` (installed next to the package in ``site-packages``).

Spark starts its Python workers, including the one that looks up ``pyspark_*`` data sources when a session
first resolves ``format("kafkalog")``, with ``PYSPARK_PYTHON`` or else whatever ``python3`` is on the
PATH. A driver run as ``.venv/bin/python job.py`` from a shell where the venv is not activated would then
look the source up in the system interpreter, which has neither pyspark nor this package, and fail with
``DATA_SOURCE_NOT_FOUND``. So, when neither ``PYSPARK_PYTHON`` nor ``PYSPARK_DRIVER_PYTHON`` is set,
``PYSPARK_PYTHON`` is set to ``sys.executable`` (an interpreter of this environment, which has both);
anything the user set, and ``spark.pyspark.python``, still wins. Nothing is imported but ``os`` and
``sys``: this runs in every interpreter of the environment.
"""

from __future__ import annotations

import os
import sys


def choose_worker_python(environ: dict[str, str] | os._Environ[str], executable: str) -> None:
    """Set ``PYSPARK_PYTHON`` in ``environ`` to ``executable`` unless a worker interpreter is chosen already
    (``PYSPARK_PYTHON`` or ``PYSPARK_DRIVER_PYTHON`` set) or ``executable`` is unknown (empty)."""
    if executable and not environ.get("PYSPARK_PYTHON") and not environ.get("PYSPARK_DRIVER_PYTHON"):
        environ["PYSPARK_PYTHON"] = executable


choose_worker_python(os.environ, sys.executable)
