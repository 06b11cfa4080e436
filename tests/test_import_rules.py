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
    allowed = {("broker", "cluster"), ("spark_kafkalog", "client")}
    offenders = []
    for path in list((ROOT / "spark_kafkalog").rglob("*.py")) + list((ROOT / "broker").rglob("*.py")):
        rel = path.relative_to(ROOT)
        if "kazoo" in _imports(path) and rel.parts[:2] not in allowed:
            offenders.append(str(rel))
    assert not offenders, f"kazoo imported outside broker/cluster and the client's ZooKeeper consumer: {offenders}"
