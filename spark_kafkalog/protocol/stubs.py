"""Render the type stubs of the generated message classes from the declarations (``apis/*.pyi``).

``python -m spark_kafkalog.protocol.stubs`` (``make stubs``) writes, next to each API module, a stub
``apis/<api>.pyi``, and ``apis/__init__.pyi``; ``--check`` (run by ``make lint``) writes nothing and exits 1
naming every stub that differs from what it would write (or has no declaration left);
``tests/protocol/test_stubs.py`` fails the same way.

What a module's stub declares, for ``produce.py``::

    class ProduceRequest(Message):            # one class per message and nested struct, nested as at
        class TopicProduceData(Message):      # run time (ProduceRequest.TopicProduceData)
            ...
        transactional_id: str | None  # v3+   # one attribute per field of any version
        acks: int
        topic_data: list[ProduceRequest.TopicProduceData]
        def __init__(self, *, transactional_id: str | None = ..., acks: int = ..., ...) -> None: ...
    class ProduceResponse(Message): ...
    API: ApiSpec[ProduceRequest, ProduceResponse]     # a data module: DATA: DataSpec[<Name>]

Field types: int8-64, uint16/32 -> ``int``; float64 -> ``float``; bool; string -> ``str``; bytes;
uuid -> ``uuid.UUID``; records -> ``Any`` (a memoryview into the frame, a file region or a SendBuffer);
``[]T`` -> ``list[T]``; a struct -> its nested class. A field nullable in any version, or whose default is
null, is ``X | None``. A trailing comment gives the versions (``v3+``), partial nullability (``null v1+``)
and tag (``tag 0``) when they differ from the enclosing struct's. Every constructor argument is keyword-only
and optional, as ``Message.__init__`` fills absent fields with their defaults.

``apis/__init__.pyi`` types ``API_BY_KEY`` with one ``__getitem__`` overload per declared key
(``API_BY_KEY[ApiKey.PRODUCE]`` is ``ApiSpec[ProduceRequest, ProduceResponse]``; any other int gives a bare
``ApiSpec``) and ``DATA_BY_NAME`` likewise by payload name. The message classes are module attributes at
run time too: ``apis/__init__.py`` sets them (``from ...apis.produce import ProduceRequest`` works).

Output is in ``ruff format``'s style (line length 120), so ``make lint`` accepts it as written.
"""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path

from . import apis
from .api_keys import ApiKey
from .schema import ApiSpec, DataSpec, FieldSpec, StructSpec, VersionRange

APIS_DIR = Path(apis.__file__).resolve().parent
ROOT = APIS_DIR.parents[2]
LINE_LENGTH = 120
HEADER = "# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.\n"

_PRIM_TYPES = {
    "bool": "bool",
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "int",
    "uint16": "int",
    "uint32": "int",
    "float64": "float",
    "uuid": "UUID",
    "string": "str",
    "bytes": "bytes",
    "records": "Any",
}
# Names a stub's annotations use; a nested struct of that name would shadow them inside its parent.
_RESERVED = frozenset({"Any", "UUID", "Message", "ApiSpec", "DataSpec", *_PRIM_TYPES.values(), "list", "dict"})


class _Module:
    """The stub text of one API or data module, built class by class."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.uses: set[str] = set()  # "Any", "UUID"

    def struct(self, spec: StructSpec, qualname: str, versions: VersionRange, indent: str) -> None:
        nested = [f for f in spec.fields if f.struct is not None]
        seen: dict[str, StructSpec] = {}
        if spec.name in _RESERVED:
            raise ValueError(f"{qualname}: a struct named {spec.name} would shadow a name the stub uses")
        self.lines.append(f"{indent}class {spec.name}(Message):")
        inner = indent + "    "
        for f in nested:
            assert f.struct is not None
            if f.struct.name in seen:  # the class generator attaches only the first (schema._make_class)
                if seen[f.struct.name] is f.struct:  # one struct under two fields (the parser shares it)
                    continue
                raise ValueError(f"{qualname}: two nested structs named {f.struct.name}")
            seen[f.struct.name] = f.struct
            self.struct(f.struct, f"{qualname}.{f.struct.name}", f.versions, inner)
            self.lines.append("")
        params = []
        for f in spec.fields:
            annotation = self.annotation(f)
            comment = _comment(f, versions)
            self.lines.append(f"{inner}{f.name}: {annotation}" + (f"  # {comment}" if comment else ""))
            params.append(f"{f.name}: {annotation} = ...")
        params.append("unknown_tags: dict[int, bytes] | None = ...")
        self.lines.extend(_def(inner, "__init__", ["self", "*", *params], "None"))

    def annotation(self, f: FieldSpec) -> str:
        if f.struct is not None:
            t = f.struct.name  # defined in this class's body, so in scope
        else:
            assert f.prim is not None
            t = _PRIM_TYPES[f.prim]
            if t in ("Any", "UUID"):
                self.uses.add(t)
        if f.kind == "array":
            t = f"list[{t}]"
        if t != "Any" and (f.nullable is not None or f.default is None):
            t += " | None"
        return t

    def render(self, schema_names: str) -> str:
        imports = []
        if "Any" in self.uses:
            imports.append("from typing import Any")
        if "UUID" in self.uses:
            imports.append("from uuid import UUID")
        head = [HEADER.rstrip("\n"), *imports, ""] if imports else [HEADER.rstrip("\n")]
        return "\n".join([*head, f"from ..schema import {schema_names}", "", *self.lines]) + "\n"


def _comment(f: FieldSpec, parent: VersionRange) -> str:
    parts = []
    if f.versions != parent:
        parts.append(f"v{f.versions}")
    if f.nullable is not None and f.nullable != f.versions:
        parts.append(f"null v{f.nullable}")
    if f.tag is not None:
        parts.append(f"tag {f.tag}")
    return ", ".join(parts)


def _def(indent: str, name: str, params: list[str], returns: str) -> list[str]:
    """A stub ``def`` laid out as ruff format lays it out: one line, else the parameters on one indented
    line, else one parameter a line with a trailing comma."""
    one = f"{indent}def {name}({', '.join(params)}) -> {returns}: ..."
    if len(one) <= LINE_LENGTH:
        return [one]
    middle = f"{indent}    {', '.join(params)}"
    if len(middle) <= LINE_LENGTH:
        return [f"{indent}def {name}(", middle, f"{indent}) -> {returns}: ..."]
    return [f"{indent}def {name}(", *(f"{indent}    {p}," for p in params), f"{indent}) -> {returns}: ..."]


def render_api(spec: ApiSpec) -> str:
    m = _Module()
    for struct in (spec.request, spec.response):
        m.struct(struct, struct.name, spec.versions, "")
        m.lines.append("")
    m.lines.append(f"API: ApiSpec[{spec.request.name}, {spec.response.name}]")
    return m.render("ApiSpec, Message")


def render_data(spec: DataSpec) -> str:
    m = _Module()
    m.struct(spec.struct, spec.struct.name, spec.versions, "")
    m.lines += ["", f"DATA: DataSpec[{spec.struct.name}]"]
    return m.render("DataSpec, Message")


def render_package() -> str:
    """``apis/__init__.pyi``: the names ``apis/__init__.py`` exports, ``API_BY_KEY`` and ``DATA_BY_NAME`` typed."""
    imports, api_overloads, data_overloads = [], [], []
    for name in apis._API_MODULES:
        spec = import_module(f"{apis.__name__}.{name}").API
        req, resp = spec.request.name, spec.response.name
        imports.append(f"from .{name} import {req}, {resp}")
        api_overloads += [
            "    @overload",
            *_def(
                "    ",
                "__getitem__",
                ["self", f"key: Literal[ApiKey.{ApiKey(spec.key).name}]", "/"],
                f"ApiSpec[{req}, {resp}]",
            ),
        ]
    for name in apis._DATA_MODULES:
        spec = import_module(f"{apis.__name__}.{name}").DATA
        imports.append(f"from .{name} import {spec.struct.name}")
        data_overloads += [
            "    @overload",
            *_def(
                "    ", "__getitem__", ["self", f'key: Literal["{spec.name}"]', "/"], f"DataSpec[{spec.struct.name}]"
            ),
        ]
    lines = [
        HEADER.rstrip("\n"),
        "from typing import Literal, overload",
        "",
        "from ..api_keys import ApiKey",
        "from ..schema import ApiSpec as ApiSpec",
        "from ..schema import DataSpec as DataSpec",
        *sorted(imports),
        "",
        "_API_MODULES: tuple[str, ...]",
        "_DATA_MODULES: tuple[str, ...]",
        "",
        "class _ApiByKey(dict[int, ApiSpec]):",
        *api_overloads,
        "    @overload",
        "    def __getitem__(self, key: int, /) -> ApiSpec: ...",
        "",
        "class _DataByName(dict[str, DataSpec]):",
        *data_overloads,
        "    @overload",
        "    def __getitem__(self, key: str, /) -> DataSpec: ...",
        "",
        "API_BY_KEY: _ApiByKey",
        "DATA_BY_NAME: _DataByName",
    ]
    return "\n".join(lines) + "\n"


def render_all() -> dict[Path, str]:
    """Every stub: path -> text."""
    out = {APIS_DIR / "__init__.pyi": render_package()}
    for name in apis._API_MODULES:
        out[APIS_DIR / f"{name}.pyi"] = render_api(import_module(f"{apis.__name__}.{name}").API)
    for name in apis._DATA_MODULES:
        out[APIS_DIR / f"{name}.pyi"] = render_data(import_module(f"{apis.__name__}.{name}").DATA)
    return out


def stale(directory: Path = APIS_DIR) -> list[Path]:
    """Stubs in ``directory`` that differ from ``render_all()``, are missing, or have no module left."""
    wanted = {directory / p.name: text for p, text in render_all().items()}
    out = [p for p, text in wanted.items() if not p.is_file() or p.read_text() != text]
    out += [p for p in directory.glob("*.pyi") if p not in wanted]
    return sorted(out)


def write(directory: Path = APIS_DIR) -> list[Path]:
    """Bring ``directory``'s stubs up to date; returns the paths written or removed."""
    changed = stale(directory)
    wanted = {directory / p.name: text for p, text in render_all().items()}
    for p in changed:
        if p in wanted:
            p.write_text(wanted[p])
        else:
            p.unlink()
    return changed


def _shown(p: Path) -> str:
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print("usage: python -m spark_kafkalog.protocol.stubs [--check]", file=sys.stderr)
        return 2
    if argv == ["--check"]:
        paths = stale()
        if paths:
            print(f"stale stubs (run `make stubs`): {', '.join(_shown(p) for p in paths)}", file=sys.stderr)
            return 1
        return 0
    for p in write():
        print(f"{_shown(p)}: {'written' if p.exists() else 'removed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
