"""Spark's Python workers on the interpreter that has this package: run at interpreter start-up by
``kafkalog-pyspark-python.pth`` (installed next to the package in ``site-packages``).

Spark starts its Python workers, including the one that looks up ``pyspark_*`` data sources when a session
first resolves ``format("kafkalog")``, with ``PYSPARK_PYTHON`` or else whatever ``python3`` is on the
PATH. A driver run as ``.venv/bin/python job.py`` from a shell where the venv is not activated would then
look the source up in the system interpreter, which has neither pyspark nor this package, and fail with
``DATA_SOURCE_NOT_FOUND``. So, when neither ``PYSPARK_PYTHON`` nor ``PYSPARK_DRIVER_PYTHON`` is set,
``PYSPARK_PYTHON`` is set to ``sys.executable`` (an interpreter of this environment, which has both);
anything the user set, and ``spark.pyspark.python``, still wins.

It also adds ``AfterPySparkWriterImport`` to ``sys.meta_path``: when one of PySpark's writer modules
(``pyspark.sql.readwriter``, ``pyspark.sql.streaming.readwriter`` and their Spark Connect twins) is
imported, ``spark_kafkalog.datasource.spark_writers.install`` runs on it, so a plain
``df.write.format("kafkalog").save()`` takes the save modes Spark's Kafka sink takes and a stream sink the
async progress tracking Spark's Kafka sink takes. Nothing is imported
here but ``os`` and ``sys``, and the finder answers ``None`` at once for every other module: this runs in
every interpreter of the environment.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported at interpreter start-up (this module runs from a .pth)
if TYPE_CHECKING:
    from importlib.abc import Loader as _LoaderBase
else:
    _LoaderBase = object


def choose_worker_python(environ: dict[str, str] | os._Environ[str], executable: str) -> None:
    """Set ``PYSPARK_PYTHON`` in ``environ`` to ``executable`` unless a worker interpreter is chosen already
    (``PYSPARK_PYTHON`` or ``PYSPARK_DRIVER_PYTHON`` set) or ``executable`` is unknown (empty)."""
    if executable and not environ.get("PYSPARK_PYTHON") and not environ.get("PYSPARK_DRIVER_PYTHON"):
        environ["PYSPARK_PYTHON"] = executable


_WRITER_MODULES = (  # spark_kafkalog.datasource.spark_writers.WRITER_MODULES (not imported here: too heavy)
    "pyspark.sql.readwriter",
    "pyspark.sql.connect.readwriter",
    "pyspark.sql.streaming.readwriter",
    "pyspark.sql.connect.streaming.readwriter",
)


class _InstallingLoader(_LoaderBase):
    """A loader that runs the module's own loader, then ``spark_writers.install`` on the module."""

    def __init__(self, loader) -> None:
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        try:
            from spark_kafkalog.datasource.spark_writers import install
        except ImportError:  # the package is being removed or is broken: leave PySpark as it is
            return
        install(module)

    def __getattr__(self, name):
        if name == "loader":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.loader, name)


class AfterPySparkWriterImport:
    """A ``sys.meta_path`` finder for PySpark's writer modules only (see the module docstring). It asks
    the other finders for the spec, skipping every finder of this class (by name: the module may be loaded
    twice, by the ``.pth`` and by an import), so two hooks never call each other."""

    def find_spec(self, name, path, target=None):
        if name not in _WRITER_MODULES:
            return None
        for finder in sys.meta_path:
            if type(finder).__name__ == "AfterPySparkWriterImport" or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _InstallingLoader(spec.loader)
                return spec
        return None


def install_writer_hook(meta_path: list) -> None:
    """Put one ``AfterPySparkWriterImport`` first in ``meta_path`` (a second call does nothing)."""
    if not any(type(f).__name__ == "AfterPySparkWriterImport" for f in meta_path):
        meta_path.insert(0, AfterPySparkWriterImport())


choose_worker_python(os.environ, sys.executable)
install_writer_hook(sys.meta_path)
