"""``format("kafkalog")`` without ``register()``: the ``pyspark_kafkalog`` top-level package.

PySpark 4.3's ``lookup_data_sources`` worker lists top-level modules with ``pkgutil.iter_modules()`` and
registers the ``DefaultSource`` of each ``pyspark_*`` one. A wheel installs ``pyspark_kafkalog`` as a
plain directory on a ``sys.path`` entry; the Spark test reproduces that with a copy on ``PYTHONPATH`` (a
setuptools editable install in finder mode is a meta-path hook that ``iter_modules`` does not list).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from setuptools import find_packages

from pyspark_kafkalog._worker_python import choose_worker_python

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_package_list_includes_pyspark_kafkalog():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(str(ROOT), include=config["include"], exclude=config.get("exclude", ()))
    assert "pyspark_kafkalog" in packages


def test_importing_pyspark_kafkalog_loads_no_pyspark_until_default_source_is_used():
    script = textwrap.dedent(
        """
        import sys
        import pyspark_kafkalog
        print(sorted(m for m in ("pyspark", "pyarrow", "spark_kafkalog.client") if m in sys.modules))
        source = pyspark_kafkalog.DefaultSource
        from pyspark.sql.datasource import DataSource
        print(source.__module__, source.__name__, issubclass(source, DataSource), source.name())
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.splitlines() == ["[]", "spark_kafkalog.datasource.source KafkaLogDataSource True kafkalog"]


@pytest.mark.integration
def test_a_fresh_spark_session_reads_and_writes_kafkalog_without_register(bootstrap, new_topic, tmp_path):
    topic = new_topic(2)
    site = tmp_path / "site"
    shutil.copytree(ROOT / "pyspark_kafkalog", site / "pyspark_kafkalog")
    script = textwrap.dedent(
        f"""
        import os, sys
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        df = spark.createDataFrame([(f"k{{i}}", f"v{{i}}") for i in range(25)], "key string, value string")
        (df.write.format("kafkalog").option("kafka.bootstrap.servers", {bootstrap!r})
            .option("topic", {topic!r}).mode("append").save())
        read = (spark.read.format("kafkalog").option("kafka.bootstrap.servers", {bootstrap!r})
            .option("subscribe", {topic!r}).load())
        print("rows", read.count(), read.selectExpr("count(DISTINCT CAST(value AS STRING))").first()[0])
        spark.stop()
        """
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "rows 25 25" in out.stdout.splitlines()


@pytest.mark.parametrize(
    ("environ", "executable", "want"),
    [
        ({}, "/venv/bin/python", "/venv/bin/python"),
        ({"PYSPARK_PYTHON": "/opt/py"}, "/venv/bin/python", "/opt/py"),
        ({"PYSPARK_DRIVER_PYTHON": "/opt/py"}, "/venv/bin/python", None),
        ({"PYSPARK_PYTHON": ""}, "/venv/bin/python", "/venv/bin/python"),
        ({}, "", None),
    ],
)
def test_the_worker_interpreter_is_this_one_unless_chosen(environ, executable, want):
    environ = dict(environ)
    choose_worker_python(environ, executable)
    assert environ.get("PYSPARK_PYTHON") == want


def test_the_worker_python_pth_is_installed_as_the_project_ships_it():
    import sysconfig

    installed = Path(sysconfig.get_paths()["purelib"], "kafkalog-pyspark-python.pth")
    assert installed.read_text() == (ROOT / "pyspark_kafkalog" / "kafkalog-pyspark-python.pth").read_text()


@pytest.mark.integration
def test_a_plain_session_from_the_venv_interpreter_without_its_path_finds_kafkalog(bootstrap, new_topic, tmp_path):
    """``.venv/bin/python job.py`` from a shell whose PATH lacks the venv (its ``python3`` is the system's,
    without pyspark) and no ``PYSPARK_PYTHON``: the data source is found, and ``register()`` on top of
    Spark's own registration logs no "replaced a statically registered data source" warning."""
    topic = new_topic(1)
    script = textwrap.dedent(
        f"""
        import os
        print("worker", os.environ.get("PYSPARK_PYTHON"))
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
        df = spark.createDataFrame([("k", "v")] * 7, "key string, value string")
        (df.write.format("kafkalog").option("kafka.bootstrap.servers", {bootstrap!r})
            .option("topic", {topic!r}).mode("append").save())
        from spark_kafkalog.datasource import register
        register(spark)
        read = (spark.read.format("kafkalog").option("kafka.bootstrap.servers", {bootstrap!r})
            .option("subscribe", {topic!r}).load())
        print("rows", read.count())
        spark.stop()
        """
    )
    env = {"HOME": os.environ.get("HOME", str(tmp_path)), "PATH": "/usr/bin:/bin"}
    if "JAVA_HOME" in os.environ:
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines()[0] == f"worker {sys.executable}"
    assert "rows 7" in out.stdout.splitlines()
    assert "statically registered" not in out.stderr, out.stderr[-3000:]
