"""The public API is listed in one place and typed: every name of ``spark_kafkalog.client.__all__`` (and of the
asyncio package, the data source and the pytest plugin's fixtures) is importable and on docs/api.md, user code
typed against it passes mypy, and the package ships its PEP 561 marker."""

from __future__ import annotations

import ast
import importlib
import importlib.resources
import inspect
import re
import subprocess
import sys

import pytest

from tests.mypy_snippets import ROOT, mypy_lines

API_PAGE = ROOT / "docs" / "api.md"


def documented() -> set[str]:
    """Every name written as code (`Name`) on docs/api.md, dotted names also by their last part."""
    names = set()
    prose = re.sub(r"^```.*?^```", "", API_PAGE.read_text(), flags=re.M | re.S)  # without the code blocks
    for text in re.findall(r"`([^`]+)`", prose):
        names.add(text)
        names.add(text.rsplit(".", 1)[-1])
    return names


@pytest.mark.parametrize("module_name", ["spark_kafkalog.client", "spark_kafkalog.client.aio"])
def test_every_public_name_of_the_client_is_importable_and_on_the_api_page(module_name):
    module = importlib.import_module(module_name)
    names = list(module.__all__)
    assert len(names) == len(set(names)), f"{module_name}.__all__ repeats a name"
    missing = []
    for name in names:
        assert getattr(module, name) is not None, name  # AttributeError/ImportError: listed but not there
        if name not in documented():
            missing.append(name)
    assert not missing, f"{module_name}.__all__ names missing from docs/api.md: {missing}"


def test_the_client_facade_exports_what_its_submodules_define_under_those_names():
    import spark_kafkalog.client as client
    from spark_kafkalog.client import serialization

    for name in serialization.__all__:
        if name in client.__all__:
            assert getattr(client, name) is getattr(serialization, name), name
    for name in ("Serializer", "Deserializer", "SerializationContext", "MessageField", "SerializationError"):
        assert name in client.__all__


_DUNDERS_USED = frozenset(("__init__", "__call__", "__enter__", "__exit__", "__aenter__", "__aexit__", "__aiter__"))


def _unannotated(qualname: str, fn: object) -> list[str]:
    try:
        signature = inspect.signature(fn)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # a builtin without a signature
        return []
    out = [
        f"{qualname}({p.name})"
        for p in signature.parameters.values()
        if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty
    ]
    if signature.return_annotation is inspect.Signature.empty and not qualname.endswith("__init__"):
        out.append(f"{qualname} -> ?")
    return out


@pytest.mark.parametrize("module_name", ["spark_kafkalog.client", "spark_kafkalog.client.aio"])
def test_every_public_function_and_method_of_the_client_is_annotated(module_name):
    module = importlib.import_module(module_name)
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj):
            missing += _unannotated(name, obj)
        elif inspect.isclass(obj):
            protocol = getattr(obj, "_is_protocol", False)  # typing.Protocol puts in an __init__ of its own
            for attr, member in vars(obj).items():
                if (attr.startswith("_") and attr not in _DUNDERS_USED) or (protocol and attr == "__init__"):
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if inspect.isfunction(member):
                    missing += _unannotated(f"{name}.{attr}", member)
    assert not missing, f"public callables without type hints: {missing}"


def test_the_data_source_its_options_page_and_lag_metrics_are_on_the_api_page():
    from spark_kafkalog import datasource

    text = API_PAGE.read_text()
    assert 'format("kafkalog")' in text and "(datasource.md)" in text and (ROOT / "docs" / "datasource.md").is_file()
    missing = [name for name in datasource.__all__ if name not in documented()]
    assert not missing, f"spark_kafkalog.datasource names missing from docs/api.md: {missing}"
    lag = ast.parse((ROOT / "spark_kafkalog" / "datasource" / "lag_metrics.py").read_text())
    (lag_all,) = [n.value for n in lag.body if isinstance(n, ast.Assign) and n.targets[0].id == "__all__"]  # type: ignore[attr-defined]
    assert {e.value for e in lag_all.elts} <= documented()  # type: ignore[attr-defined]


def test_the_embedded_brokers_and_every_fixture_of_the_pytest_plugin_are_on_the_api_page():
    from broker.embedded_cluster import EmbeddedCluster
    from broker.server import EmbeddedBroker

    assert {"broker.server.EmbeddedBroker", "broker.embedded_cluster.EmbeddedCluster"} <= documented()
    assert EmbeddedBroker.__module__ == "broker.server" and EmbeddedCluster.__module__ == "broker.embedded_cluster"
    plugin = ast.parse((ROOT / "broker" / "testing" / "pytest_plugin.py").read_text())
    fixtures = [
        node.name
        for node in plugin.body
        if isinstance(node, ast.FunctionDef)
        and not node.name.startswith("_")
        and any("fixture" in ast.unparse(d) for d in node.decorator_list)
    ]
    assert {"kafkalog_broker", "kafkalog_cluster", "bootstrap_servers"} <= set(fixtures)
    missing = [name for name in fixtures if name not in documented()]
    assert not missing, f"pytest plugin fixtures missing from docs/api.md: {missing}"


def test_the_api_pages_links_name_pages_that_exist():
    links = re.findall(r"\]\(([^)#]+)\)", API_PAGE.read_text())
    assert links
    assert [link for link in links if not (API_PAGE.parent / link).is_file()] == []


def test_user_code_typed_against_the_public_api_passes_mypy(tmp_path):
    lines, status = mypy_lines(
        tmp_path,
        """\
        from spark_kafkalog.client import (
            ClientConfig, Consumer, ConsumerRecord, IntegerDeserializer, IntegerSerializer, JSONSerializer,
            KeySerializationError, MessageField, Producer, RecordMetadata, SerializationContext, Serializer,
            TopicPartition,
        )


        class Celsius(Serializer[float]):
            def __call__(self, obj: float | None, ctx: SerializationContext | None = None) -> bytes | None:
                return None if obj is None else b"%.1f" % obj


        def produce(servers: str) -> int:
            with Producer(servers, key_serializer=IntegerSerializer(), value_serializer=Celsius()) as producer:
                try:
                    metadata: RecordMetadata = producer.send("temps", 21.5, key=7).result(10)
                except KeySerializationError as e:
                    print(e.topic, e.field is MessageField.KEY)
                    raise
                return metadata.offset


        def consume(servers: str) -> list[ConsumerRecord]:
            with Consumer(servers, key_deserializer=IntegerDeserializer()) as consumer:
                consumer.assign([TopicPartition("temps", 0)])
                return consumer.poll(1000)


        config = ClientConfig.create(value_serializer=JSONSerializer(lambda obj, ctx: vars(obj)))
        reveal_type(config.value_serializer_for())
        reveal_type(IntegerDeserializer()(b"\\x00\\x00\\x00\\x01", None))
        IntegerSerializer()("seven")
        """,
    )
    assert lines[0] == (
        '30: note: Revealed type is "def (Any, str, typing.Sequence[tuple[str, bytes | None]] | None) -> bytes | None"'
    ), lines
    assert lines[1] == '31: note: Revealed type is "int | None"', lines
    assert len(lines) == 3 and lines[2].startswith('32: error: Argument 1 to "__call__" of "IntegerSerializer"'), lines
    assert status == 1


def test_the_package_ships_its_py_typed_marker(tmp_path):
    assert importlib.resources.files("spark_kafkalog").joinpath("py.typed").is_file()  # where it is imported from
    # what a wheel holds: setuptools' build_py copies the package data pyproject.toml declares
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "spark_kafkalog" / "py.typed").is_file()
    assert (tmp_path / "spark_kafkalog" / "client" / "serialization.py").is_file()
    assert list((tmp_path / "spark_kafkalog" / "protocol" / "apis").glob("*.pyi"))
