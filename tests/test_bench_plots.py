"""Bench figures drawn from the JSON in bench/results/: every axes labelled, cases named (never by a JSON key),
legends clear of the data, and the read figure's titles about reads only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from bench import plots

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
# Figures whose results await a run on a quiet machine: until their JSON is in bench/results/ they are drawn
# from the JSON of a --quick smoke run kept here (its shape, not its figures, is what these tests need).
AWAITING_RESULTS = {"kafka_compare": Path(__file__).resolve().parent / "data" / "kafka_compare_quick.json"}


def result_json(name: str) -> Path:
    """Where figure ``name``'s JSON is: bench/results/, else its smoke-run sample while it awaits results."""
    path = RESULTS / f"{name}.json"
    return path if path.exists() or name not in AWAITING_RESULTS else AWAITING_RESULTS[name]


def json_keys(value: object) -> set[str]:
    """Every dict key of a parsed JSON document that has a letter in it (the ids of cases, modes, fields),
    outside its ``machine`` description (package names such as ``lz4`` are also codec names)."""
    if isinstance(value, dict):
        keys = {k for k in value if re.search(r"[A-Za-z]", k)}
        for k, v in value.items():
            if k != "machine":
                keys |= json_keys(v)
        return keys
    if isinstance(value, list):
        return set().union(*map(json_keys, value)) if value else set()
    return set()


def raw_ids(label: str, ids: set[str]) -> list[str]:
    """The JSON keys ``label`` shows as they are: a whole line, or a word of a line for a snake_case id."""
    found = []
    for line in label.splitlines():
        if line.strip() in ids:
            found.append(line.strip())
        found += [w for w in re.split(r"[\s(),:]+", line) if "_" in w and w in ids]
    return found


def overlaps(a: Bbox, b: Bbox) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def data_extents(ax: Axes, renderer) -> list[tuple[str, Bbox]]:
    """Window extents of the bars, lines and collections drawn in ``ax``, clipped to the axes."""
    extents = []
    for artist in [*ax.patches, *ax.lines, *ax.collections]:
        if not artist.get_visible():
            continue
        clipped = Bbox.intersection(artist.get_window_extent(renderer), ax.bbox)
        if clipped is not None:
            extents.append((f"{type(artist).__name__} {artist.get_label()!r}", clipped))
    return extents


def all_axes(fig: Figure) -> list[Axes]:
    return [a for a in fig.findobj(Axes) if isinstance(a, Axes)]


def legends(fig: Figure) -> list[Legend]:
    return [leg for leg in fig.findobj(Legend) if isinstance(leg, Legend)]


def titles(fig: Figure) -> list[str]:
    texts = [ax.get_title(loc) for ax in all_axes(fig) for loc in ("left", "center", "right")]
    texts += [sub.get_suptitle() for sub in [fig, *fig.subfigs]]
    return [t for t in texts if t]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> dict[str, tuple[Figure, dict]]:
    """Every figure saved from its JSON into a temporary directory (Agg), with the JSON it came from."""
    out = tmp_path_factory.mktemp("bench-plots")
    figures = {}
    for name in plots.FIGURES:
        result = json.loads(result_json(name).read_text())
        figures[name] = (plots.save(name, result, out / f"{name}.png"), result)
        assert (out / f"{name}.png").stat().st_size > 0
    return figures


def test_every_bench_png_has_a_figure_drawn_from_its_json():
    recorded = {name for name in plots.FIGURES if name not in AWAITING_RESULTS or (RESULTS / f"{name}.json").exists()}
    pngs = {p.stem for p in RESULTS.glob("*.png")}
    assert pngs == recorded
    assert all((RESULTS / f"{name}.json").exists() for name in recorded)
    assert all(result_json(name).exists() for name in plots.FIGURES)


@pytest.mark.parametrize("name", sorted(plots.FIGURES))
def test_every_axes_labels_its_x_and_y_quantity(drawn, name):
    fig, _ = drawn[name]
    unlabelled = [
        (ax.get_title() or repr(ax), axis)
        for ax in all_axes(fig)
        for axis, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel()))
        if not label.strip()
    ]
    assert not unlabelled, f"{name}.png: axes without a label: {unlabelled}"


@pytest.mark.parametrize("name", sorted(plots.FIGURES))
def test_tick_and_legend_labels_are_names_not_json_keys(drawn, name):
    fig, result = drawn[name]
    ids = json_keys(result)
    texts: list[Text] = []
    for ax in all_axes(fig):
        for minor in (False, True):
            texts += ax.get_xticklabels(minor=minor) + ax.get_yticklabels(minor=minor)
    for leg in legends(fig):
        texts += leg.get_texts()
    raw = {(t.get_text(), key) for t in texts for key in raw_ids(t.get_text(), ids)}
    assert not raw, f"{name}.png shows JSON keys as labels: {sorted(raw)}"


@pytest.mark.parametrize("name", sorted(plots.FIGURES))
def test_legends_cover_no_bar_or_line_and_fit_the_figure(drawn, name):
    fig, _ = drawn[name]
    renderer = fig.canvas.get_renderer()
    covered = []
    for leg in legends(fig):
        box = leg.get_window_extent(renderer)
        assert fig.bbox.x0 - 1 <= box.x0 and box.x1 <= fig.bbox.x1 + 1, f"{name}.png: legend cut off"
        assert fig.bbox.y0 - 1 <= box.y0 and box.y1 <= fig.bbox.y1 + 1, f"{name}.png: legend cut off"
        for ax in all_axes(fig):
            covered += [(ax.get_title(), what) for what, extent in data_extents(ax, renderer) if overlaps(box, extent)]
    assert not covered, f"{name}.png: a legend covers {covered}"


def test_read_figure_titles_name_no_write_rates(drawn):
    fig, _ = drawn["datasource"]
    assert not [t for t in titles(fig) if "write" in t.lower()]


def quota_latency_axes(fig: Figure) -> Axes:
    return next(ax for ax in all_axes(fig) if ax.get_title().startswith("confluent-kafka"))


def test_quota_figure_draws_kafkalog_beside_its_reference(drawn):
    fig, result = drawn["quota"]
    assert set(result["results"]) == {"kafkalog", "kafka"}, "quota.json was recorded without Apache Kafka's run"
    ticks = [t.get_text() for t in quota_latency_axes(fig).get_xticklabels()]
    assert len(ticks) == 4 and sum("Apache Kafka" in t for t in ticks) == 2
    assert "no Apache Kafka reference" not in quota_latency_axes(fig).get_title()


def test_quota_figure_without_its_reference_says_so():
    """A run where Apache Kafka could not start (no ``make peers``): kafkalog's bars alone, the title says so."""
    result = json.loads(result_json("quota").read_text())
    result["results"] = {"kafkalog": result["results"]["kafkalog"]}
    ax = quota_latency_axes(plots.quota(result))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["producer run\non kafkalog", "consumer run\non kafkalog"]
    assert "no Apache Kafka reference" in ax.get_title()
