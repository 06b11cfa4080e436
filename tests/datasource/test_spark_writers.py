"""Batch save modes of format("kafkalog") as Spark's Kafka sink takes them (pure: a stand-in writer class),
and the import hook that wraps PySpark's writers in every interpreter of the environment."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from pyspark_kafkalog._worker_python import AfterPySparkWriterImport, install_writer_hook
from spark_kafkalog.datasource.options import KafkaOptionError
from spark_kafkalog.datasource.spark_writers import ASYNC_OVERRIDE, WRITER_MODULES, batch_save_mode, install


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        (None, "append"),
        ("errorifexists", "append"),
        ("ErrorIfExists", "append"),
        ("error", "append"),
        ("default", "append"),
        ("append", "append"),
        (" APPEND ", "append"),
        ("bogus", "bogus"),  # Spark's own error names it
    ],
)
def test_the_modes_sparks_kafka_sink_accepts_are_sent_as_append(given, sent):
    assert batch_save_mode(given) == sent


@pytest.mark.parametrize(("given", "name"), [("overwrite", "Overwrite"), ("Ignore", "Ignore")])
def test_overwrite_and_ignore_are_refused_as_spark_refuses_them(given, name):
    with pytest.raises(KafkaOptionError, match=f"^Save mode {name} not allowed for Kafka. Allowed save modes are"):
        batch_save_mode(given)


def _module():
    calls = []

    class DataFrameWriter:
        def format(self, source):
            calls.append(("format", source))
            return self

        def mode(self, saveMode):  # noqa: N803
            calls.append(("mode", saveMode))
            return self

        def save(self, path=None, format=None, mode=None, partitionBy=None, **options):  # noqa: A002, N803
            calls.append(("save", path, format, mode, options))

    return types.SimpleNamespace(DataFrameWriter=DataFrameWriter), calls


def test_install_wraps_only_kafkalog_writers_and_once():
    module, calls = _module()
    install(module)
    first = module.DataFrameWriter.save
    install(module)
    assert module.DataFrameWriter.save is first
    w = module.DataFrameWriter()
    w.format("kafkalog").save()
    assert calls[-1] == ("save", None, None, "append", {})
    w.mode("errorifexists").save(topic="t")
    assert calls[-1] == ("save", None, None, "append", {"topic": "t"})
    with pytest.raises(KafkaOptionError, match="Save mode Overwrite"):
        w.mode("overwrite").save()
    other = module.DataFrameWriter()
    other.format("json").save("/p")
    assert calls[-1] == ("save", "/p", None, None, {})
    other.save("/p", format="KafkaLog", mode=None)
    assert calls[-1] == ("save", "/p", "KafkaLog", "append", {})
    with pytest.raises(KafkaOptionError, match="Save mode Ignore"):
        module.DataFrameWriter().save(format="kafkalog", mode="ignore")


def test_the_hook_answers_only_for_pysparks_writer_modules():
    finder = AfterPySparkWriterImport()
    assert finder.find_spec("json", None) is None
    assert finder.find_spec("pyspark.sql.types", None) is None
    meta_path: list = []
    install_writer_hook(meta_path)
    install_writer_hook(meta_path)
    assert len(meta_path) == 1


def test_a_fresh_interpreter_of_the_environment_wraps_pysparks_writer_on_import():
    code = (
        "import pyspark.sql.readwriter as m, pyspark.sql.streaming.readwriter as s; "
        "print(m.DataFrameWriter.__dict__.get('_kafkalog_wrapped'), s.DataStreamWriter.__dict__.get('_kafkalog_wrapped'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True True", out.stderr[-2000:]


def test_the_hook_wraps_each_listed_module_when_it_is_imported(tmp_path, monkeypatch):
    # Spark Connect's writer needs pandas, absent here: the same mechanism, on a module of our own
    import pyspark_kafkalog._worker_python as hook

    (tmp_path / "kafkalog_fake_writer.py").write_text(
        "class DataFrameWriter:\n"
        "    def format(self, source): return self\n"
        "    def mode(self, saveMode): return self\n"
        "    def save(self, path=None, format=None, mode=None, partitionBy=None, **options): self.sent = mode\n"
    )
    monkeypatch.setattr(hook, "_WRITER_MODULES", (*hook._WRITER_MODULES, "kafkalog_fake_writer"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", [AfterPySparkWriterImport(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "kafkalog_fake_writer", raising=False)
    import kafkalog_fake_writer

    assert kafkalog_fake_writer.DataFrameWriter._kafkalog_wrapped
    w = kafkalog_fake_writer.DataFrameWriter().format("kafkalog")
    w.save()
    assert w.sent == "append"
    assert hook._WRITER_MODULES == WRITER_MODULES + ("kafkalog_fake_writer",)


def test_a_kafkalog_stream_writer_is_taken_for_async_progress_tracking_as_sparks_kafka_sink():
    class DataStreamWriter:
        def __init__(self):
            self.options = {}

        def format(self, source):
            return self

        def option(self, key, value):
            self.options[key] = value
            return self

        def start(self, path=None, format=None, outputMode=None, partitionBy=None, queryName=None, **options):  # noqa: A002, N803
            return dict(self.options)

    module = types.SimpleNamespace(DataStreamWriter=DataStreamWriter)
    install(module)
    assert module.DataStreamWriter().format("kafkalog").start() == {ASYNC_OVERRIDE: "true"}
    assert module.DataStreamWriter().start(format="KAFKALOG") == {ASYNC_OVERRIDE: "true"}
    assert module.DataStreamWriter().format("console").start() == {}
    assert module.DataStreamWriter().start(format="parquet") == {}
