"""``notebooks/kafkalog_demo.ipynb``: stored without outputs, and runnable (executed with nbclient in a fresh
``python3`` kernel on this interpreter: cluster, produce, batch read, streaming query, plots, its own checks)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "kafkalog_demo.ipynb"


def test_notebook_is_stored_without_outputs():
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    for cell in code:
        assert cell.outputs == [], cell.source[:80]
        assert cell.execution_count is None, cell.source[:80]


@pytest.mark.integration
def test_notebook_runs_and_draws_its_plots():
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    started = time.monotonic()
    # a failing cell (including the notebook's own asserts) raises CellExecutionError with its traceback
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    seconds = time.monotonic() - started
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.get("data", {})]
    assert len(images) == 1  # one figure: throughput per micro-batch and lag per partition
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "40,000 rows in" in text and "order-amounts: 40,000 records" in text
    print(f"notebook executed in {seconds:.0f} s")
