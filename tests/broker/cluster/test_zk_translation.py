"""Kazoo's exceptions become registry exceptions at the session boundary, and kazoo stays inside that boundary
(pure: no ZooKeeper server)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from kazoo import exceptions as kz
from kazoo.handlers.threading import KazooTimeoutError

from broker.cluster.registry import RegistryError, RegistryUnavailableError, StaleStateError
from broker.cluster.zk_nodes import BadVersionError, NodeError, NodeExistsError, NoNodeError, NotEmptyError
from broker.cluster.zk_session import translate_kazoo_error

CLUSTER = Path(__file__).resolve().parents[3] / "broker" / "cluster"


@pytest.mark.parametrize(
    ("kazoo_error", "ours", "condition"),
    [
        (kz.NodeExistsError, NodeExistsError, "node already exists"),
        (kz.NoNodeError, NoNodeError, "no such node"),
        (kz.BadVersionError, BadVersionError, "version differs"),
        (kz.NotEmptyError, NotEmptyError, "has children"),
    ],
)
def test_node_conditions_become_node_errors_naming_operation_and_full_path(kazoo_error, ours, condition):
    exc = translate_kazoo_error(kazoo_error(), "create", "/config/topics/t", chroot="/kafka", hosts="zk:2181")
    assert type(exc) is ours and isinstance(exc, NodeError) and isinstance(exc, RegistryError)
    assert (exc.operation, exc.path) == ("create", "/config/topics/t")
    assert str(exc).startswith("ZooKeeper create /kafka/config/topics/t: ") and condition in str(exc)


def test_a_lost_compare_and_set_is_a_stale_state_error():
    exc = translate_kazoo_error(kz.BadVersionError(), "set", "/brokers/topics/t/partitions/0/state")
    assert isinstance(exc, StaleStateError)


@pytest.mark.parametrize(
    "kazoo_error",
    [
        kz.ConnectionLoss,
        kz.SessionExpiredError,
        kz.ConnectionClosedError,
        kz.OperationTimeoutError,
        kz.ConnectionDropped,
        KazooTimeoutError,
    ],
)
def test_connection_failures_become_registry_unavailable(kazoo_error):
    exc = translate_kazoo_error(kazoo_error("gone"), "get", "/controller", chroot="/c", hosts="zk:2181")
    assert type(exc) is RegistryUnavailableError
    assert "ZooKeeper at zk:2181 unavailable during get /c/controller" in str(exc)
    assert kazoo_error.__name__ in str(exc) and "gone" in str(exc)


@pytest.mark.parametrize(
    "kazoo_error", [kz.NoAuthError, kz.InvalidACLError, kz.RuntimeInconsistency, kz.RolledBackError, kz.KazooException]
)
def test_any_other_kazoo_error_is_a_registry_error_naming_kazoos_exception(kazoo_error):
    exc = translate_kazoo_error(kazoo_error(), "delete", "/admin/delete_topics/t", hosts="zk:2181")
    assert type(exc) is RegistryError
    assert f"ZooKeeper at zk:2181: delete /admin/delete_topics/t failed: {kazoo_error.__name__}" in str(exc)


def test_errors_that_are_not_kazoos_pass_through_unchanged():
    original = ValueError("bad argument")
    assert translate_kazoo_error(original, "get", "/x") is original


def test_the_root_path_under_a_chroot_is_the_chroot_itself():
    assert "get /kafka:" in str(translate_kazoo_error(kz.NoNodeError(), "get", "/", chroot="/kafka"))


def _imports_kazoo(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "kazoo" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "kazoo":
            return True
    return False


def test_only_the_session_module_of_the_cluster_package_imports_kazoo():
    importers = sorted(p.name for p in CLUSTER.glob("*.py") if _imports_kazoo(p))
    assert importers == ["zk_session.py"]


def test_the_cluster_package_and_the_kazoo_free_layers_load_no_kazoo():
    code = (
        "import sys, broker.cluster, broker.cluster.zk_nodes, broker.cluster.zk_layout, "
        "broker.cluster.zk_watches, broker.cluster.zk_registration\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'kazoo')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=CLUSTER.parents[1]
    )
    assert out.stdout.strip() == ""
