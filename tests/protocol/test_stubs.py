"""The committed stubs (``spark_kafkalog/protocol/apis/*.pyi``) are what the declarations generate, they
describe the classes that exist at run time, and mypy reads the field types from them."""

from __future__ import annotations

import ast

from spark_kafkalog.protocol import API_BY_KEY, DATA_BY_NAME, Message, stubs
from spark_kafkalog.protocol.apis import _API_MODULES, _DATA_MODULES
from tests.mypy_snippets import ROOT, mypy_lines


def test_committed_stubs_are_what_the_declarations_generate():
    stale = [str(p.relative_to(ROOT)) for p in stubs.stale()]
    assert not stale, f"stale stubs: {stale}: run `make stubs`"


def test_check_names_every_stale_missing_and_orphaned_stub(tmp_path):
    for path, text in stubs.render_all().items():
        (tmp_path / path.name).write_text(text)
    (tmp_path / "produce.pyi").write_text("# edited by hand\n")
    (tmp_path / "fetch.pyi").unlink()
    (tmp_path / "gone_api.pyi").write_text("")
    assert [p.name for p in stubs.stale(tmp_path)] == ["fetch.pyi", "gone_api.pyi", "produce.pyi"]
    stubs.write(tmp_path)
    assert stubs.stale(tmp_path) == []
    assert not (tmp_path / "gone_api.pyi").exists()


def _stub_classes(tree: ast.Module) -> dict[str, list[str]]:
    """Dotted class path -> annotated attribute names, for every class of a stub."""
    out: dict[str, list[str]] = {}

    def visit(node: ast.ClassDef, prefix: str) -> None:
        path = prefix + node.name
        out[path] = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        for child in node.body:
            if isinstance(child, ast.ClassDef):
                visit(child, path + ".")

    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            visit(node, "")
    return out


def test_every_stub_class_exists_at_run_time_with_those_fields():
    import spark_kafkalog.protocol.apis as apis_package

    for name in (*_API_MODULES, *_DATA_MODULES):
        module = getattr(apis_package, name)
        tree = ast.parse((stubs.APIS_DIR / f"{name}.pyi").read_text())
        classes = _stub_classes(tree)
        assert classes, name
        for path, fields in classes.items():
            obj = module
            for part in path.split("."):
                obj = getattr(obj, part)
            assert issubclass(obj, Message), path
            assert fields == [f.name for f in obj._spec.fields], f"{name}: {path}"
    assert apis_package.produce.ProduceRequest is API_BY_KEY[0].Request
    assert apis_package.consumer_protocol_assignment.ConsumerProtocolAssignment is (
        DATA_BY_NAME["ConsumerProtocolAssignment"].cls
    )


def test_mypy_reads_field_types_and_rejects_a_str_in_an_int_field(tmp_path):
    lines, status = mypy_lines(
        tmp_path,
        """\
        from spark_kafkalog.protocol import API_BY_KEY, ApiKey

        request = API_BY_KEY[ApiKey.PRODUCE].Request(acks=1)
        reveal_type(request.acks)
        reveal_type(API_BY_KEY[ApiKey.FETCH].Response.FetchableTopicResponse.PartitionData().aborted_transactions)
        request.acks = "all"
        API_BY_KEY[ApiKey.PRODUCE].Request(acks="all")


        def any_key(key: int) -> None:
            reveal_type(API_BY_KEY[key])
        """,
    )
    fetch = "spark_kafkalog.protocol.apis.fetch.FetchResponse.FetchableTopicResponse.PartitionData"
    assert lines == [
        '4: note: Revealed type is "int"',
        f'5: note: Revealed type is "list[{fetch}.AbortedTransaction] | None"',
        '6: error: Incompatible types in assignment (expression has type "str", variable has type "int")  [assignment]',
        '7: error: Argument "acks" to "ProduceRequest" has incompatible type "str"; expected "int"  [arg-type]',
        '11: note: Revealed type is "spark_kafkalog.protocol.schema.ApiSpec[Any, Any]"',
    ]
    assert status == 1
