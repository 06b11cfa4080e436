"""Layering rules: the protocol and record layers import no pyspark or kazoo; only datasource imports pyspark."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_protocol_and_records_load_neither_pyspark_nor_kazoo():
    code = (
        "import sys, spark_kafkalog.protocol, spark_kafkalog.records\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'kazoo', 'py4j', 'pyarrow'))\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"heavy modules loaded: {out.stdout.strip()}"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_datasource_package_imports_pyspark():
    offenders = []
    for path in list((ROOT / "spark_kafkalog").rglob("*.py")) + list((ROOT / "broker").rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[:2] == ("spark_kafkalog", "datasource"):
            continue
        if "pyspark" in _imports(path):
            offenders.append(str(rel))
    assert not offenders, f"pyspark imported outside spark_kafkalog/datasource: {offenders}"


def test_kazoo_is_imported_only_by_the_cluster_registry_and_zookeeper_consumer():
    allowed = {("broker", "cluster"), ("spark_kafkalog", "legacy")}
    offenders = []
    for path in list((ROOT / "spark_kafkalog").rglob("*.py")) + list((ROOT / "broker").rglob("*.py")):
        rel = path.relative_to(ROOT)
        if "kazoo" in _imports(path) and rel.parts[:2] not in allowed:
            offenders.append(str(rel))
    assert not offenders, f"kazoo imported outside broker/cluster and the client's ZooKeeper consumer: {offenders}"


# -- inside broker/: a layer order and no import cycle ------------------------------------------------
# Lowest first. A module may import its own layer and the ones below, never one above; every import
# counts (module level, inside functions, and under TYPE_CHECKING), so the order is the design's.
BROKER_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundation",
        (
            "broker",
            "broker.config",
            "broker.config_keys",
            "broker.processes",
            "broker.event_loop",
            "broker.producer_ids",
            "broker.log",
            "broker.cluster",
        ),
    ),
    ("partitions", ("broker.metadata", "broker.replication")),
    (
        "cluster state",
        (
            "broker.config_admin",
            "broker.metadata.sync",
            "broker.cluster.controller",
            "broker.coordinator",
            "broker.share",
        ),
    ),
    ("handler seam", ("broker.api", "broker.services", "broker.config_admin.describe")),
    ("handlers", ("broker.handlers",)),
    ("network", ("broker.network", "broker.schema_registry")),
    # the console tools (the broker.cli package) sit on top: they may use any layer
    (
        "broker",
        ("broker.server", "broker.embedded_cluster", "broker.cluster_operations", "broker.cli", "broker.testing"),
    ),
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _broker_import_graph() -> dict[str, set[str]]:
    """broker module -> the broker modules it imports (a name imported from a package counts as its module)."""
    modules = {_module_name(p): p for p in (ROOT / "broker").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                candidates = [module] + [f"{module}.{alias.name}" for alias in node.names]
            else:
                continue
            for candidate in candidates:
                while candidate and candidate not in modules:
                    candidate = candidate.rpartition(".")[0]
                if candidate and candidate != name:
                    targets.add(candidate)
        graph[name] = targets
    return graph


def _layer(module: str) -> int:
    best = (-1, -1)
    for index, (_, prefixes) in enumerate(BROKER_LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best[1]:
                best = (index, len(prefix))
    assert best[0] >= 0, f"{module} has no layer in BROKER_LAYERS: add it"
    return best[0]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_broker_modules_import_only_their_layer_and_the_ones_below():
    graph = _broker_import_graph()
    upward = sorted(
        f"{m} ({BROKER_LAYERS[_layer(m)][0]}) imports {t} ({BROKER_LAYERS[_layer(t)][0]})"
        for m, targets in graph.items()
        for t in targets
        if _layer(t) > _layer(m)
    )
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_broker_has_no_import_cycle():
    cycles = _cycles(_broker_import_graph())
    assert not cycles, f"import cycles inside broker/: {cycles}"


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# -- the whole tree: its parts, who imports pyspark and kazoo, and no import cycle ---------------------
# protocol < records < client < {legacy, datasource}; broker sits on the client (never on legacy or
# datasource, and no spark_kafkalog module imports broker); pyspark_kafkalog on datasource. Each part may
# import itself and the parts listed; every import counts (module level, inside functions, TYPE_CHECKING).
TREE_PARTS: dict[str, tuple[str, ...]] = {
    "spark_kafkalog": (),  # the version only
    "spark_kafkalog.protocol": ("spark_kafkalog",),
    "spark_kafkalog.records": ("spark_kafkalog", "spark_kafkalog.protocol"),
    "spark_kafkalog.security": ("spark_kafkalog",),
    "spark_kafkalog.schemas": ("spark_kafkalog",),
    "spark_kafkalog.client": (
        "spark_kafkalog",
        "spark_kafkalog.protocol",
        "spark_kafkalog.records",
        "spark_kafkalog.security",
        "spark_kafkalog.schemas",
    ),
    "spark_kafkalog.legacy": (
        "spark_kafkalog",
        "spark_kafkalog.protocol",
        "spark_kafkalog.records",
        "spark_kafkalog.security",
        "spark_kafkalog.schemas",
        "spark_kafkalog.client",
    ),
    "spark_kafkalog.datasource": (
        "spark_kafkalog",
        "spark_kafkalog.protocol",
        "spark_kafkalog.records",
        "spark_kafkalog.security",
        "spark_kafkalog.schemas",
        "spark_kafkalog.client",
    ),
    "broker": (
        "spark_kafkalog",
        "spark_kafkalog.protocol",
        "spark_kafkalog.records",
        "spark_kafkalog.security",
        "spark_kafkalog.schemas",
        "spark_kafkalog.client",
    ),
    "pyspark_kafkalog": (
        "spark_kafkalog",
        "spark_kafkalog.protocol",
        "spark_kafkalog.records",
        "spark_kafkalog.security",
        "spark_kafkalog.schemas",
        "spark_kafkalog.client",
        "spark_kafkalog.datasource",
    ),
}
# The only importers of these packages: a module, or a package with everything in it.
EXTERNAL_IMPORTERS: dict[str, tuple[str, ...]] = {
    "pyspark": ("spark_kafkalog.datasource", "pyspark_kafkalog"),
    "kazoo": ("broker.cluster", "spark_kafkalog.legacy.zk_consumer_registry"),
}
TREE_PACKAGES = ("broker", "spark_kafkalog", "pyspark_kafkalog")


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _tree_imports() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module -> the tree's modules it imports, module -> the top-level names of everything it imports).

    ``import a.b`` is an import of ``a.b``; ``from a import b`` of the module ``a.b`` when there is one, else
    of ``a``; names outside the tree count by their longest prefix that is a module of it. The packages
    Python initialises on the way (``a`` for ``a.b``) do not count: a package's ``__init__`` is a facade."""
    modules = {_module_name(p): p for package in TREE_PACKAGES for p in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    external: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        tops: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
                tops.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                    tops.add(module.split(".")[0])
                candidates = [
                    f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module for alias in node.names
                ]
            else:
                continue
            for candidate in candidates:
                while candidate and candidate not in modules:
                    candidate = candidate.rpartition(".")[0]
                if candidate and candidate != name:
                    targets.add(candidate)
        graph[name] = targets
        external[name] = tops
    return graph, external


def _part(module: str) -> str:
    parts = [part for part in TREE_PARTS if _within(module, part)]
    assert parts, f"{module} is in no part of TREE_PARTS: add it"
    return max(parts, key=len)


def _cycle_paths(graph: dict[str, set[str]]) -> list[str]:
    """One shortest cycle through the first module of every strongly connected component, as ``a -> b -> a``
    (with the component's other modules, when the path does not visit them all)."""
    paths = []
    for component in _cycles(graph):
        start, members = component[0], set(component)
        previous: dict[str, str] = {}
        frontier, seen, path = [start], {start}, None
        while frontier and path is None:
            following = []
            for node in frontier:
                for child in sorted(graph[node]):
                    if child == start:
                        path = [node]
                        while path[-1] != start:
                            path.append(previous[path[-1]])
                        path.reverse()
                        break
                    if child in members and child not in seen:
                        seen.add(child)
                        previous[child] = node
                        following.append(child)
                if path is not None:
                    break
            frontier = following
        assert path is not None
        text = " -> ".join(path + [start])
        rest = sorted(members - set(path))
        paths.append(text + (f" (its cycle also holds {', '.join(rest)})" if rest else ""))
    return paths


def test_each_part_of_the_tree_imports_only_the_parts_below_it():
    graph, _ = _tree_imports()
    offenders = sorted(
        f"{module} imports {target}: {_part(module)} may import {', '.join(TREE_PARTS[_part(module)]) or 'nothing'}"
        for module, targets in graph.items()
        for target in targets
        if _part(target) != _part(module) and _part(target) not in TREE_PARTS[_part(module)]
    )
    assert not offenders, "imports against the tree's layers:\n" + "\n".join(offenders)


def test_pyspark_and_kazoo_are_imported_only_by_their_importers():
    _, external = _tree_imports()
    offenders = sorted(
        f"{module} imports {package} (only {', '.join(EXTERNAL_IMPORTERS[package])} may)"
        for module, tops in external.items()
        for package in EXTERNAL_IMPORTERS
        if package in tops and not any(_within(module, allowed) for allowed in EXTERNAL_IMPORTERS[package])
    )
    assert not offenders, "\n".join(offenders)


def test_the_tree_has_no_import_cycle():
    graph, _ = _tree_imports()
    paths = _cycle_paths(graph)
    assert not paths, "import cycles in broker/, spark_kafkalog/, pyspark_kafkalog/:\n" + "\n".join(paths)


def test_a_cycle_is_reported_as_its_path():
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": {"b"}, "e": {"a"}}
    assert _cycle_paths(graph) == ["a -> b -> c -> a (its cycle also holds d)"]
