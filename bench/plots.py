"""Bench figures drawn from their JSON results: ``bench/results/<name>.json`` -> ``<name>.png``.

``FIGURES`` maps a result name to a function that draws its figure from the parsed JSON (nothing is
measured here) and returns a matplotlib ``Figure`` (object-oriented API, no pyplot state, Agg on save).
Each benchmark calls ``save`` after writing its JSON; ``python -m bench.plots [name ...]`` (or
``python -m bench.run_all --replot``) redraws the PNGs from the JSON already in ``bench/results/``
without running a benchmark.

Contract of every figure (checked by tests/test_bench_plots.py): each axes has an x and a y label that
name the quantity and its unit (or what the categories are); tick and legend labels are readable names,
never the JSON's keys (a key without a name in the tables below is a ``KeyError``, not a raw label);
legends sit outside the plotting area; titles describe only what is drawn.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer
from matplotlib.figure import Figure, FigureBase
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

RESULTS = Path(__file__).resolve().parent / "results"
DPI = 110
KIB = 1024
MIB = 1024 * 1024

# JSON keys -> what the figures call them.
PRODUCERS = {"spark_kafkalog": "kafkalog Producer", "confluent_kafka": "confluent-kafka Producer"}
REPLICATION_MODES = {"acks1_rf1": "acks=1, RF 1", "acksall_rf3": "acks=all, RF 3"}
FAILOVERS = {
    "sigkill": ("leader SIGKILL", "next_ack_s", "signal -> next ack"),
    "controlled_shutdown": ("leader controlled\nshutdown (SIGTERM)", "unavailable_s", "longest gap\nbetween acks"),
    "sigkill_follower": ("follower SIGKILL", "next_ack_s", "signal -> next ack"),
}
READERS = {
    "kafkalog": "Spark read, format('kafkalog')",
    "ceiling": "ceiling: Python data source yielding prebuilt Arrow batches",
    "client": "kafkalog client + Arrow decode, one process, no Spark",
    "confluent": "confluent-kafka Consumer",
}
CLIENT_CASES = {
    "produce ours": "produce: kafkalog Producer",
    "produce kafka-python": "produce: kafka-python KafkaProducer",
    "produce confluent-kafka": "produce: confluent-kafka Producer",
    "fetch ours (batches)": "fetch: kafkalog fetch_batches (batches)",
    "fetch ours (records)": "fetch: kafkalog, decoded to records",
    "fetch kafka-python": "fetch: kafka-python KafkaConsumer",
    "fetch confluent-kafka": "fetch: confluent-kafka Consumer",
}
ISOLATION = {"read_uncommitted": "isolation.level=read_uncommitted", "read_committed": "isolation.level=read_committed"}


def size_label(n: int) -> str:
    """``100`` -> ``100 B``, ``1024`` -> ``1 KiB``, ``1048576`` -> ``1 MiB``."""
    for unit, name in ((MIB, "MiB"), (KIB, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n} B"


def txn_label(mode: str, modes: dict) -> str:
    """A txn bench mode (``idempotent``, ``txn_<n>``) as words, from its ``transaction_records``."""
    n = modes[mode]["transaction_records"]
    return "idempotent, no transactions" if n is None else f"transactions of {n:,} records"


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _thousands(ax: Axes, axis: str = "y") -> None:
    """Plain tick numbers with thousands separators (no ``1e6`` offset)."""
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def _grouped_bars(
    ax: Axes, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], width: float = 0.8
) -> list[BarContainer]:
    """One cluster of bars per group, one bar per series in each; groups as x tick labels."""
    each = width / len(series)
    bars = []
    for k, (label, values) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * each for i in range(len(groups))]
        bars.append(ax.bar(xs, values, each, label=label))
    ax.set_xticks(range(len(groups)), groups)
    return bars


def _label_bars(ax: Axes, bars: BarContainer, texts: Sequence[str], fontsize: float = 8) -> None:
    for bar, text in zip(bars, texts):
        ax.annotate(
            text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=fontsize
        )
    ax.margins(y=0.1)


def _legend_below(where: FigureBase, ax: Axes, ncols: int) -> None:
    """The legend of ``ax``'s series under ``where`` (a figure or subfigure), outside every axes."""
    handles, labels = ax.get_legend_handles_labels()
    where.legend(handles, labels, loc="outside lower center", ncols=ncols, frameon=False, fontsize=9)


def replication(result: dict) -> Figure:
    fig = _figure(16, 5.6)
    sub_tp, sub_fo, sub_lat = fig.subfigures(1, 3, width_ratios=[1, 1.15, 1], squeeze=False)[0]
    value = size_label(result["cluster"]["value_bytes"])

    ax = sub_tp.subplots()
    tp = result["throughput"]
    names = list(tp)
    modes = list(tp[names[0]]["median_records_per_s"])
    _grouped_bars(
        ax,
        [f"{PRODUCERS[n]}\nratio {tp[n]['ratio']:.2f}" for n in names],
        [(REPLICATION_MODES[m], [tp[n]["median_records_per_s"][m] for n in names]) for m in modes],
        width=0.7,
    )
    runs = len(tp[names[0]]["records_per_s"][modes[0]])
    ax.set_title(
        f"produce throughput, {value} values, one partition\n"
        f"(Kafka's published acks=all RF 3 / acks=1 RF 1: {result['kafka_published_ratio']:.2f})"
    )
    ax.set_xlabel("producer (ratio: acks=all RF 3 / acks=1 RF 1)")
    ax.set_ylabel(f"records/s (median of {runs} runs)")
    _thousands(ax)
    _legend_below(sub_tp, ax, 2)

    ax = sub_fo.subplots()
    fo = result["failover"]
    ticks, centres, x = [], [], 0.0
    for i, (how, (name, key, measure)) in enumerate((h, FAILOVERS[h]) for h in fo):
        reps = [rep[key] for rep in fo[how]["repetitions"]]
        xs = [x + j for j in range(len(reps))]
        ax.bar(xs, reps, 0.8, color=("C4", "C5", "C9")[i % 3])
        ax.hlines(
            fo[how]["goal_s"],
            xs[0] - 0.5,
            xs[-1] + 0.5,
            colors="red",
            linestyles="--",
            label="goal" if i == 0 else None,
        )
        ticks.append(f"{name}\n{measure}")
        centres.append((xs[0] + xs[-1]) / 2)
        x = xs[-1] + 2
    ax.set_xticks(centres, ticks)
    each = len(next(iter(fo.values()))["repetitions"])
    ax.set_title(f"failover, {result['cluster']['brokers']} brokers, RF 3, one bar per repetition ({each} each)")
    ax.set_xlabel("failure, and what is measured from the signal")
    ax.set_ylabel("writes unavailable (s)")
    handles, labels = ax.get_legend_handles_labels()
    sub_fo.legend(
        handles,
        ["goal: SIGKILL within the ZooKeeper session timeout + 1 s, controlled shutdown under 1 s"],
        loc="outside lower center",
        frameon=False,
        fontsize=9,
    )

    ax = sub_lat.subplots()
    lat = result["latency"]
    modes = list(lat)
    _grouped_bars(
        ax,
        [REPLICATION_MODES[m] for m in modes],
        [("median (p50)", [lat[m]["p50_ms"] for m in modes]), ("p99", [lat[m]["p99_ms"] for m in modes])],
        width=0.7,
    )
    ax.set_title(f"end-to-end latency, produce -> consumer sees it\n{lat[modes[0]]['rate']:,} records/s of {value}")
    ax.set_xlabel("topic replication and producer acks")
    ax.set_ylabel("latency (ms)")
    _legend_below(sub_lat, ax, 2)
    return fig


def datasource(result: dict) -> Figure:
    cases = result["cases"]
    sizes = sorted({c["value_size"] for c in cases})
    partitions = result["method"]["partitions"]
    spark = result["method"]["spark"].split(",")[0]
    fig = _figure(14, 5.8)
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    for ax, size in zip(axes, sizes):
        mine = [c for c in cases if c["value_size"] == size]
        bars = _grouped_bars(
            ax,
            [c["codec"] for c in mine],
            [(label, [c[key]["records_per_s"] / 1e6 for c in mine]) for key, label in READERS.items()],
        )
        _label_bars(ax, bars[0], [f"{c['ratio_to_ceiling']:.0%}" for c in mine])
        ax.set_title(f"{size_label(size)} values, {mine[0]['records']:,} records, {partitions} partitions")
        ax.set_xlabel("compression codec")
        ax.set_ylabel("million records/s")
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"Spark batch read throughput, {spark} into the noop sink (percent: kafkalog read / ceiling)")
    _legend_below(fig, axes[0], 2)
    return fig


def write(result: dict) -> Figure:
    cases = result["spark_write"]
    api = result["batch_api"]
    sizes = sorted({c["value_size"] for c in cases})
    spark = result["method"]["spark"].split(",")[0]
    fig = _figure(17, 5.8)
    sub_spark, sub_api = fig.subfigures(1, 2, width_ratios=[len(sizes), 1.2], squeeze=False)[0]

    axes = sub_spark.subplots(1, len(sizes), squeeze=False)[0]
    for ax, size in zip(axes, sizes):
        rows = [c for c in cases if c["value_size"] == size]
        bars = _grouped_bars(
            ax,
            [c["codec"] for c in rows],
            [
                (
                    "ceiling: Python Arrow writer that only counts rows",
                    [c["ceiling"]["records_per_s"] / 1e6 for c in rows],
                ),
                ("Spark write, format('kafkalog')", [c["kafkalog"]["records_per_s"] / 1e6 for c in rows]),
            ],
        )
        _label_bars(ax, bars[1], [f"{c['ratio_to_ceiling']:.0%}" for c in rows])
        ax.set_title(f"{size_label(size)} values, {rows[0]['records']:,} rows")
        ax.set_xlabel("compression codec")
        ax.set_ylabel("million rows/s")
    sub_spark.suptitle(f"Spark write, {spark} (percent: kafkalog write / ceiling)")
    _legend_below(sub_spark, axes[0], 2)

    ax = sub_api.subplots()
    batch = api["send_batch"]
    ax.bar(
        range(len(batch)),
        [c["records_per_s"] / 1e6 for c in batch],
        color="C2",
        label=f"Producer.send_batch, calls of {api['rows_per_call']:,} rows",
    )
    n = len(batch)
    ax.bar([n], [api["send"]["records_per_s"] / 1e6], color="C0", label="Producer.send, one call per record")
    ax.bar([n + 1], [api["confluent_produce"]["records_per_s"] / 1e6], color="C1", label="confluent-kafka produce")
    target = result["target"]["batch_api_records_per_s"]
    ax.axhline(
        target / 1e6,
        color="grey",
        linestyle="--",
        linewidth=1,
        label=f"target for Producer.send_batch: {target / 1e6:g} M records/s",
    )
    ax.set_xticks(range(n + 2), [c["codec"] for c in batch] + ["none\n(send)", "none\n(confluent)"], fontsize=8)
    ax.set_title(f"one Python process, {api['records']:,} records of {size_label(api['value_size'])}")
    ax.set_xlabel("compression codec")
    ax.set_ylabel("million records/s")
    sub_api.suptitle("Producer APIs, acknowledged by the broker")
    _legend_below(sub_api, ax, 1)
    return fig


def streaming(result: dict) -> Figure:
    latency, throughput = result["latency"], result["throughput"]
    fig = _figure(14, 5.8)
    sub_lat, sub_tp = fig.subfigures(1, 2, width_ratios=[3, 2], squeeze=False)[0]

    ax = sub_lat.subplots()
    values = sorted(latency["latencies_ms_sample"])
    ax.plot(
        values, [(i + 1) / len(values) for i in range(len(values))], label="produce -> consumed from the output topic"
    )
    e2e = latency["end_to_end"]
    for q, style in (("p50", "--"), ("p99", ":")):
        ax.axvline(e2e[f"{q}_ms"], linestyle=style, color="grey", label=f"{q}: {e2e[f'{q}_ms']:,.0f} ms")
    ax.set_title(
        f"{latency['rate_records_per_s']:,} records/s for {latency['seconds_measured']:.0f} s, "
        f"trigger {latency['trigger_processing_time_ms']} ms, {latency['micro_batches']} micro-batches"
    )
    ax.set_xlabel("end-to-end latency (ms)")
    ax.set_ylabel("share of records (cumulative)")
    ax.grid(alpha=0.3)
    sub_lat.suptitle("readStream -> writeStream, both format('kafkalog')")
    _legend_below(sub_lat, ax, 3)

    ax = sub_tp.subplots()
    runs = [
        ("batch", "batch read"),
        ("stream", "AvailableNow\n1 micro-batch"),
        ("stream_limited", f"AvailableNow\n{throughput['stream_limited']['micro_batches']} micro-batches"),
    ]
    batch_rate = throughput["batch"]["records_per_s"]
    whole = [throughput[k]["records_per_s"] / 1e6 for k, _ in runs]
    inside = [throughput[k].get("records_per_s_in_micro_batches", 0) / 1e6 for k, _ in runs]
    bars = _grouped_bars(
        ax,
        [label for _, label in runs],
        [("whole query (start to end, checkpoint included)", whole), ("inside the micro-batches only", inside)],
        width=0.7,
    )
    _label_bars(ax, bars[0], [f"{throughput[k]['records_per_s'] / batch_rate:.0%}" for k, _ in runs])
    _label_bars(ax, bars[1], ["" if not v else f"{v * 1e6 / batch_rate:.0%}" for v in inside])
    ax.set_title(
        f"{throughput['records']:,} records of {size_label(throughput['value_size'])}, best of {throughput['repeats']}"
    )
    ax.set_xlabel("query")
    ax.set_ylabel("million records/s (noop sink)")
    ax.grid(axis="y", alpha=0.3)
    sub_tp.suptitle("backlog read rate (percent: of the batch read)")
    _legend_below(sub_tp, ax, 1)
    return fig


def broker(result: dict) -> Figure:
    fig = _figure(12, 5.5)
    ax = fig.subplots()
    produce = result["produce"]
    labels = [f"produce {size_label(r['value_bytes'])}\n{r['codec']}, acks={r['acks']}" for r in produce]
    ax.bar(range(len(produce)), [r["mb_per_s"] for r in produce], color="C0", label="confluent-kafka Producer")
    consume = result["consume"]
    ax.bar([len(produce)], [consume["mb_per_s"]], color="C2", label="confluent-kafka Consumer")
    labels.append(f"consume {size_label(consume['value_bytes'])}\nnone")
    raw = result["raw"]
    ax.bar(
        [len(produce) + 1, len(produce) + 2],
        [raw["produce_mb_per_s"], raw["fetch_mb_per_s"]],
        color="C4",
        label="pre-encoded requests, 8 in flight",
    )
    batch = f"{raw['batch_bytes'] / MIB:.0f} MiB batches"
    labels += [f"Produce requests\n{batch}", f"Fetch requests\n{batch}"]
    limits = result["limits"]
    ax.axhline(limits["produce_mb_per_s"], color="C0", ls="--", lw=1, label="produce limit: socket -> file")
    ax.axhline(limits["fetch_mb_per_s"], color="C2", ls="--", lw=1, label="fetch limit: sendfile over loopback")
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_yscale("log")
    ax.set_xlabel("load (value size, codec, acks)")
    ax.set_ylabel("MB/s of record values (log scale)")
    ax.set_title(f"kafkalog broker, one process ({result['machine']})")
    _legend_below(fig, ax, 3)
    return fig


def client(result: dict) -> Figure:
    sizes = result["sizes"]
    fig = _figure(15, 5.5)
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    for ax, (size, row) in zip(axes, sizes.items()):
        keys = [k for k in row if "/" not in k]
        ax.barh(
            [CLIENT_CASES[k] for k in keys],
            [row[k] / 1e6 for k in keys],
            color=["C0" if "ours" in k else "C7" for k in keys],
        )
        ax.set_title(f"{size} values, {result['records']:,} records")
        ax.set_xlabel("million records/s")
        ax.set_ylabel("operation: client")
        ax.invert_yaxis()
    fig.suptitle(f"{result['scenario']}, {result['cpus']} cores")
    fig.legend(
        [Patch(color="C0"), Patch(color="C7")],
        ["kafkalog client", "other clients"],
        loc="outside lower center",
        ncols=2,
        frameon=False,
        fontsize=9,
    )
    return fig


def groups(result: dict) -> Figure:
    fig = _figure(13, 4.6)
    ax_commit, ax_fetch, ax_rebalance = fig.subplots(1, 3)
    pipelined = result["commits_pipelined"]
    ax_commit.bar(
        [f"OffsetCommit requests\n{pipelined['in_flight']} in flight", "AdminClient\nalter_group_offsets"],
        [pipelined["per_s"], result["commits_admin_client"]["per_s"]],
    )
    ax_commit.set_title("offset commits, one partition each")
    ax_commit.set_xlabel("how the commits are sent")
    ax_commit.set_ylabel("offset commits/s")
    _thousands(ax_commit)

    fetch = result["offset_fetch"]
    ax_fetch.bar(["median (p50)", "p99"], [fetch["p50_ms"], fetch["p99_ms"]])
    ax_fetch.set_title(f"OffsetFetch, one partition, {fetch['requests']:,} requests")
    ax_fetch.set_xlabel("percentile")
    ax_fetch.set_ylabel("latency (ms)")

    r = result["rebalance"]
    ax_rebalance.bar(
        [f"{x['members_before']} -> {x['members_before'] - 1}" for x in r["leaves"]],
        [x["seconds_after_leave"] or 0 for x in r["leaves"]],
    )
    ax_rebalance.axhline(r["goal_s"], color="red", linestyle="--", label=f"goal: {r['goal_s']:g} s")
    ax_rebalance.set_title(f"rebalance after one member leaves\n{r['members']} members, {r['partitions']} partitions")
    ax_rebalance.set_xlabel("members in the group")
    ax_rebalance.set_ylabel("seconds until every partition is owned")
    fig.legend(loc="outside lower right", frameon=False, fontsize=9)
    return fig


REBALANCE_PROTOCOLS = {"classic": "classic protocol\n(range, eager)", "consumer": "consumer protocol\n(KIP-848, range)"}
REBALANCE_SYSTEMS = {"kafkalog": "kafkalog", "kafka": "Apache Kafka 4.4"}


def rebalance(result: dict) -> Figure:
    """Seconds until the remaining members own every partition after one leaves, per protocol and system;
    one bar per leave (10 -> 9, 9 -> 8, ...)."""
    fig = _figure(9, 4.8)
    ax = fig.subplots()
    runs = result["results"]
    systems = [s for s in REBALANCE_SYSTEMS if s in runs]
    cases = [(s, p) for s in systems for p in REBALANCE_PROTOCOLS if p in runs[s]]
    leaves = max(len(runs[s][p]["leaves"]) for s, p in cases)
    series = []
    for k in range(leaves):
        first = next(runs[s][p]["leaves"][k] for s, p in cases if len(runs[s][p]["leaves"]) > k)
        members = first["members_before"]
        values = [
            (runs[s][p]["leaves"][k]["seconds_after_leave"] or 0) if len(runs[s][p]["leaves"]) > k else 0
            for s, p in cases
        ]
        series.append((f"{members} -> {members - 1} members", values))
    groups = [f"{REBALANCE_PROTOCOLS[p]}\non {REBALANCE_SYSTEMS[s]}" for s, p in cases]
    _grouped_bars(ax, groups, series, width=0.75)
    settings = result["settings"]
    ax.set_title(
        f"rebalance after one member leaves: {settings['members']} confluent-kafka members, "
        f"{settings['partitions']} partitions,\nheartbeat every {settings['heartbeat_interval_ms']:,} ms"
    )
    ax.set_xlabel("group protocol and broker")
    ax.set_ylabel("seconds until every partition is owned")
    ax.margins(y=0.15)
    _legend_below(fig, ax, leaves)
    return fig


def log(result: dict) -> Figure:
    fig = _figure(15, 5.2)
    sub_append, sub_rest = fig.subfigures(1, 2, width_ratios=[1, 2], squeeze=False)[0]

    ax = sub_append.subplots()
    cases = result["append"]
    bars = _grouped_bars(
        ax,
        [f"{c['batch_bytes']:,} B" for c in cases],
        [
            ("PartitionLog.append_as_leader", [c["log"]["mb_per_s"] for c in cases]),
            ("CRC check + pwrite only", [c["checked_write"]["mb_per_s"] for c in cases]),
            ("plain os.write", [c["plain_write"]["mb_per_s"] for c in cases]),
        ],
    )
    _label_bars(ax, bars[0], [f"{c['ratio']:.0%}\n{c['log']['batches_per_s']:,}\nbatches/s" for c in cases])
    ax.set_title("append vs plain sequential write\n(percent: append / plain write)")
    ax.set_xlabel("batch size")
    ax.set_ylabel("MB/s")
    _legend_below(sub_append, ax, 1)

    ax_fetch, ax_recovery = sub_rest.subplots(1, 2)
    fetch = result["fetch"]
    bars = ax_fetch.bar(
        ["to /dev/null", "to a socketpair\ndrained by a thread"],
        [fetch[k]["mb_per_s"] for k in ("dev_null", "socketpair")],
        color=["C2", "C8"],
    )
    _label_bars(ax_fetch, bars, [f"{fetch[k]['fetches_per_s']:,} fetches/s" for k in ("dev_null", "socketpair")])
    ax_fetch.set_title(f"fetch regions of up to {size_label(fetch['max_bytes'])} (read + sendfile)")
    ax_fetch.set_xlabel("destination of sendfile")
    ax_fetch.set_ylabel("MB/s")

    rec = result["recovery"]
    bars = ax_recovery.bar(
        ["after a clean stop\n(indexes trusted)", "after an unclean stop\n(every batch checked)"],
        [rec["clean_s"], rec["unclean_s"]],
        color=["C0", "C3"],
    )
    _label_bars(ax_recovery, bars, [f"{rec[k]:.3f} s" for k in ("clean_s", "unclean_s")])
    ax_recovery.set_title(f"reopen a {rec['log_bytes'] / MIB:,.0f} MiB log of {rec['segments']} segments")
    ax_recovery.set_xlabel("how the log was closed")
    ax_recovery.set_ylabel("seconds to reopen")
    return fig


def records(result: dict) -> Figure:
    cases = result["cases"]
    theirs = f"kafka-python {result['machine']['packages']['kafka-python']}"
    fig = _figure(12, 9)
    axes = fig.subplots(2, 1)
    for ax, phase in zip(axes, ("build", "decode")):
        bars = _grouped_bars(
            ax,
            [f"{c['codec']}\n{size_label(c['value_size'])}" for c in cases],
            [
                ("kafkalog (spark_kafkalog.records)", [c[phase]["ours"]["records_per_s"] / 1e6 for c in cases]),
                (theirs, [c[phase]["kafka_python"]["records_per_s"] / 1e6 for c in cases]),
            ],
        )
        _label_bars(ax, bars[0], [f"{c[phase]['ratio']:.1f}x" for c in cases])
        ax.set_title(f"{phase} one batch of {cases[0]['records']:,} records (above the bars: kafkalog / kafka-python)")
        ax.set_xlabel("codec and value size")
        ax.set_ylabel("million records/s")
        ax.grid(axis="y", alpha=0.3)
    _legend_below(fig, axes[0], 2)
    return fig


def txn(result: dict) -> Figure:
    fig = _figure(18, 5.8)
    sub_prod, sub_commit, sub_cons = fig.subfigures(1, 3, squeeze=False)[0]
    prod = result["produce"]
    names = list(prod)
    modes = prod[names[0]]["modes"]
    runs = result["rounds"]

    ax = sub_prod.subplots()
    bars = _grouped_bars(
        ax,
        [PRODUCERS[n] for n in names],
        [(txn_label(m, modes), [prod[n]["modes"][m]["median_records_per_s"] for n in names]) for m in modes],
    )
    for container, mode in zip(bars, modes):
        _label_bars(ax, container, [f"{prod[n]['modes'][mode]['share_of_idempotent']:.2f}" for n in names], 7)
    ax.set_title(
        f"produce, acks=all, RF {result['cluster']['replication_factor']} (share of idempotent above the bars)"
    )
    ax.set_xlabel("producer")
    ax.set_ylabel(f"records/s (median of {runs} runs)")
    _thousands(ax)
    _legend_below(sub_prod, ax, 2)

    ax = sub_commit.subplots()
    txn_modes = [m for m in modes if modes[m]["transaction_records"] is not None]
    _grouped_bars(
        ax,
        [f"{modes[m]['transaction_records']:,}" for m in txn_modes],
        [
            (f"{PRODUCERS[n]} {q}", [prod[n]["modes"][m]["commit_latency_ms"][q] for m in txn_modes])
            for n in names
            for q in ("p50", "p99")
        ],
    )
    ax.set_title("commit_transaction latency (the EndTxn round trip)")
    ax.set_xlabel("records per transaction")
    ax.set_ylabel("latency (ms)")
    _legend_below(sub_commit, ax, 2)

    ax = sub_cons.subplots()
    cons = result["consume"]
    topics = list(cons)
    _grouped_bars(
        ax,
        [f"{modes[t]['transaction_records']:,}\nratio {cons[t]['committed_over_uncommitted']:.2f}" for t in topics],
        [(ISOLATION[i], [cons[t]["median_records_per_s"][i] for t in topics]) for i in ISOLATION],
        width=0.7,
    )
    ax.set_title("confluent-kafka Consumer of committed transactions")
    ax.set_xlabel("records per transaction (ratio: read_committed / read_uncommitted)")
    ax.set_ylabel(f"records/s (median of {runs} runs)")
    _thousands(ax)
    _legend_below(sub_cons, ax, 1)
    return fig


COMPARE_SYSTEMS = {"kafkalog": "on kafkalog brokers", "kafka": "on Apache Kafka 3.9.1 brokers"}
COMPARE_TOPOLOGIES = {"one_broker": "1 broker, acks=1", "three_brokers": "3 brokers RF 3, acks=all"}
COMPARE_DRIVERS = {"perf_tools": "Kafka perf tools", "confluent_kafka": "confluent-kafka"}
SPARK_FORMATS = {"kafkalog": "format('kafkalog')", "kafka": "format('kafka')"}


def kafka_compare(result: dict) -> Figure:
    """kafkalog vs Apache Kafka: broker MB/s per driver and topology, Spark MB/s per format, latency p50/p99."""
    fig = _figure(17, 9.5)
    top, bottom = fig.subfigures(2, 1, height_ratios=[1, 1])
    brokers = top.subplots()
    spark, lat = bottom.subplots(1, 2, width_ratios=[1, 1.6])
    runs = result["results"]
    systems = [s for s in COMPARE_SYSTEMS if s in runs]
    colors = {s: f"C{k}" for k, s in enumerate(COMPARE_SYSTEMS)}

    def mb_bars(ax: Axes, cases: list[tuple[str, Callable[[dict], float]]]) -> None:
        values = {s: [get(runs[s]) for _, get in cases] for s in systems}
        names = [c[0] for c in cases]
        if len(systems) == 2:  # the ratio under each case
            names = [f"{n}\nratio {a / b:.2f}" if b else n for n, a, b in zip(names, *values.values())]
        for s, container in zip(systems, _grouped_bars(ax, names, [(COMPARE_SYSTEMS[s], values[s]) for s in systems])):
            for bar in container:
                bar.set_color(colors[s])
            _label_bars(ax, container, [f"{b.get_height():.1f}" for b in container], fontsize=7)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_ylabel("MB/s of record values (10^6 B)")

    mb_bars(
        brokers,
        [
            (
                f"{phase} with {COMPARE_DRIVERS[d]}\n{COMPARE_TOPOLOGIES[t]}",
                lambda r, t=t, d=d, p=phase: r[t][d][p]["mb_per_s"],
            )
            for t in COMPARE_TOPOLOGIES
            for d in COMPARE_DRIVERS
            for phase in ("produce", "consume")
        ],
    )
    brokers.set_xlabel("case: operation, driver, brokers and acks (ratio: on kafkalog / on Apache Kafka)")
    brokers.set_title("broker throughput, same machine, same run")
    spark_cases: list[tuple[str, Callable[[dict], float]]] = [
        (f"write with\n{name}", lambda r, f=fmt: r["one_broker"]["spark"]["write"][f]["mb_per_s"])
        for fmt, name in SPARK_FORMATS.items()
    ]
    spark_cases += [
        (f"read with\n{name}", lambda r, k=f"{fmt}_of_{fmt}_written": r["one_broker"]["spark"]["read"][k]["mb_per_s"])
        for fmt, name in SPARK_FORMATS.items()
    ]
    mb_bars(spark, spark_cases)
    spark.set_xlabel("Spark operation and format, one broker (ratio: on kafkalog / on Apache Kafka)")
    spark.set_title("Spark local[2], same topics")
    lat_cases = [
        (f"{COMPARE_DRIVERS[d]}\nsend -> ack\n{COMPARE_TOPOLOGIES[t]}", t, d, "produce")
        for t in COMPARE_TOPOLOGIES
        for d in COMPARE_DRIVERS
    ]
    lat_cases += [
        (f"Kafka EndToEndLatency\nsend -> consumed\n{COMPARE_TOPOLOGIES[t]}", t, "perf_tools", "end_to_end")
        for t in COMPARE_TOPOLOGIES
        if "end_to_end" in runs[systems[0]][t]["perf_tools"]
    ]
    series = [
        (f"{q} {COMPARE_SYSTEMS[s]}", [runs[s][t][d][phase][f"{q}_ms"] for _, t, d, phase in lat_cases])
        for s in systems
        for q in ("p50", "p99")
    ]
    for k, container in enumerate(_grouped_bars(lat, [c[0] for c in lat_cases], series)):
        for bar in container:  # each system's colour; p99 lighter
            bar.set_color(colors[systems[k // 2]])
            bar.set_alpha(0.45 if k % 2 else 1.0)
    lat.tick_params(axis="x", labelsize=8)
    lat.set_yscale("log")
    _thousands(lat)
    lat.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    lat.set_xlabel("driver, what is timed, brokers and acks")
    lat.set_ylabel("latency, ms (log scale)")
    lat.set_title("latency: producers at full speed, EndToEndLatency one record at a time")
    fig.legend(
        [Patch(color=colors[s]) for s in systems] + [Patch(color="C7"), Patch(color="C7", alpha=0.45)],
        [COMPARE_SYSTEMS[s] for s in systems] + ["latency p50", "latency p99"],
        loc="outside lower center",
        ncols=len(systems) + 2,
        frameon=False,
        fontsize=9,
    )
    return fig


TLS_LISTENERS = {"PLAINTEXT": "plaintext", "SSL": "TLS", "SASL_SSL": "TLS + SASL/PLAIN"}
TLS_PHASES = {"produce": "produce", "consume": "consume"}


def tls(result: dict) -> Figure:
    """TLS vs plaintext per system: MB/s and broker CPU per MB per listener, and throughput relative to
    plaintext next to Kafka's published 17-55% drop."""
    fig = _figure(18, 6.2)
    mb_ax, cpu_ax, ratio_ax = fig.subplots(1, 3, width_ratios=[1.3, 1.3, 1.3])
    runs = result["results"]
    systems = [s for s in COMPARE_SYSTEMS if s in runs]
    colors = {s: f"C{k}" for k, s in enumerate(COMPARE_SYSTEMS)}
    cases = [(phase, listener) for phase in TLS_PHASES for listener in TLS_LISTENERS]
    names = [f"{TLS_PHASES[p]} over\n{TLS_LISTENERS[n]}" for p, n in cases]
    for ax, key, scale, fmt in (
        (mb_ax, "mb_per_s", 1.0, "{:.0f}"),
        (cpu_ax, "broker_cpu_s_per_mb", 1000.0, "{:.1f}"),
    ):
        series = [(COMPARE_SYSTEMS[s], [runs[s][n][p][key] * scale for p, n in cases]) for s in systems]
        for s, container in zip(systems, _grouped_bars(ax, names, series)):
            for bar in container:
                bar.set_color(colors[s])
            _label_bars(ax, container, [fmt.format(b.get_height()) for b in container], fontsize=7)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_xlabel("operation (confluent-kafka) and listener")
    mb_ax.set_ylabel("MB/s of record values (10^6 B)")
    mb_ax.set_title("throughput, one broker, acks=1")
    cpu_ax.set_ylabel("broker CPU ms per MB of record values")
    cpu_ax.set_title("broker CPU per MB (user + system)")
    cost = result["tls_cost"]
    secured = [(phase, listener) for phase in TLS_PHASES for listener in TLS_LISTENERS if listener != "PLAINTEXT"]
    low, high = result["settings"]["kafka_published_throughput_drop_pct"]
    ratio_ax.axhspan(
        1 - high / 100, 1 - low / 100, color="C7", alpha=0.2, label=f"Kafka's published cost ({low}-{high}% less)"
    )
    own = result.get("kafkalog_client_tls_cost", {})  # kafkalog's own client, when the run measured it
    series = [
        (
            f"confluent-kafka {COMPARE_SYSTEMS[s]}" if own else COMPARE_SYSTEMS[s],
            [cost[s][n][p]["mb_per_s_ratio"] for p, n in secured],
        )
        for s in systems
    ]
    series += [
        (f"kafkalog's client {COMPARE_SYSTEMS[s]}", [own[s][n][p]["mb_per_s_ratio"] for p, n in secured])
        for s in systems
        if s in own
    ]
    bars = _grouped_bars(ratio_ax, [f"{TLS_PHASES[p]} over\n{TLS_LISTENERS[n]}" for p, n in secured], series)
    hatched = [False] * len(systems) + [True] * (len(series) - len(systems))
    for s, hatch, container in zip(systems + [s for s in systems if s in own], hatched, bars):
        for bar in container:
            bar.set_color(colors[s])
            if hatch:
                bar.set_alpha(0.5)
                bar.set_hatch("//")
        _label_bars(ratio_ax, container, [f"{b.get_height():.2f}" for b in container], fontsize=7)
    ratio_ax.axhline(1.0, color="black", linewidth=0.8)
    ratio_ax.tick_params(axis="x", labelsize=8)
    hatch_note = "\n(hatched: kafkalog's client)" if own else " (confluent-kafka)"
    ratio_ax.set_xlabel(f"operation and secured listener{hatch_note}")
    ratio_ax.set_ylabel("MB/s relative to plaintext (same system)")
    ratio_ax.set_title("throughput over TLS / over plaintext")
    _legend_below(fig, ratio_ax, 3 if own else len(series) + 1)
    return fig


QUOTA_PHASES = {"produce": "producer", "consume": "consumer"}
QUOTA_LATENCY = {"unloaded": "alone on the broker", "loaded": "while the throttled client runs"}
QUOTA_SYSTEMS = {"kafkalog": ("kafkalog", "-", "o"), "kafka": ("Apache Kafka 3.9", "--", "s")}  # name, line, marker


def quota(result: dict) -> Figure:
    """Client quotas under load, kafkalog beside Apache Kafka (the reference of the same run, when it ran):
    what the throttled clients moved over time against their quota, and the unthrottled producer's p99
    latency alone and next to them."""
    fig = _figure(15, 5.8)
    left, right = fig.subfigures(1, 2, width_ratios=[1.15, 1], squeeze=False)[0]
    rate_ax = left.subplots()
    lat_ax = right.subplots()
    settings = result["settings"]
    bound = settings["quota_bytes_per_s"] / MIB
    runs = result["results"]
    systems = [s for s in QUOTA_SYSTEMS if s in runs]
    seconds = settings["seconds"]
    for system in systems:
        name, line, marker = QUOTA_SYSTEMS[system]
        for k, (phase, client_name) in enumerate(QUOTA_PHASES.items()):
            client = runs[system][phase]["throttled_client"]
            xs, ys, total = [0.0], [0.0], 0
            for i, n in enumerate(client["per_second_bytes"]):
                total += n
                xs.append(i + 1.0)
                ys.append(total / MIB)
            rate_ax.plot(
                xs, ys, marker=marker, markersize=3, color=f"C{k}", linestyle=line,
                label=f"{name}, throttled {client_name}: {client['bytes_per_s'] / MIB:.2f} MiB/s",
            )  # fmt: skip
    rate_ax.plot([0, seconds], [0, bound * seconds], color="black", linestyle=":", label=f"quota: {bound:g} MiB/s")
    rate_ax.set_xlabel("seconds since the throttled client started")
    rate_ax.set_ylabel("MiB of record values moved (cumulative)")
    rate_ax.set_title(f"kafka-python clients with a {bound:g} MiB/s quota, as fast as they can for {seconds:g} s")
    _legend_below(left, rate_ax, 2)
    cases = [(s, p) for p in QUOTA_PHASES for s in systems]
    groups = [f"{QUOTA_PHASES[p]} run\non {QUOTA_SYSTEMS[s][0]}" for s, p in cases]
    series = [
        (f"unthrottled producer {label}", [runs[s][p]["free_producer_latency"][key]["p99_ms"] for s, p in cases])
        for key, label in QUOTA_LATENCY.items()
    ]
    for container in _grouped_bars(lat_ax, groups, series):
        _label_bars(lat_ax, container, [f"{b.get_height():.1f} ms" for b in container])
    lat_ax.set_xlabel("throttled client's run, broker")
    lat_ax.set_ylabel("p99 produce latency, ms (one value, then flush)")
    title = f"confluent-kafka, {settings['latency_rate_per_s']} values/s of {size_label(settings['value_bytes'])}"
    if "kafka" not in runs:
        title += "\n(no Apache Kafka reference in this run)"
    lat_ax.set_title(title)
    _legend_below(right, lat_ax, 1)
    return fig


AIO_PRODUCERS = {
    "AIOProducer": "kafkalog AIOProducer (asyncio)",
    "aiokafka": "aiokafka AIOKafkaProducer (asyncio)",
    "Producer": "kafkalog Producer (blocking, reference)",
}


def aio_producer(result: dict) -> Figure:
    """Records/s of the asyncio producers (and the blocking one) per acks setting, each bar labelled."""
    fig = _figure(10, 5.5)
    ax = fig.subplots()
    groups = list(result["acks"])
    names = list(AIO_PRODUCERS)
    bars = _grouped_bars(
        ax,
        [f"acks={acks}" for acks in groups],
        [(AIO_PRODUCERS[name], [result["acks"][acks]["records_per_s"][name] for acks in groups]) for name in names],
    )
    for name, container in zip(names, bars):
        _label_bars(ax, container, [f"{result['acks'][acks]['records_per_s'][name]:,}" for acks in groups])
    _thousands(ax)
    ax.set_xlabel("producer acknowledgement setting")
    ax.set_ylabel("records/s (best round)")
    ratios = ", ".join(f"acks={acks}: {result['acks'][acks]['aio_vs_aiokafka']}x" for acks in groups)
    ax.set_title(f"{result['scenario']}\nAIOProducer / aiokafka: {ratios}; {result['cpus']} cores")
    _legend_below(fig, ax, 3)
    return fig


def schema_read(result: dict) -> Figure:
    """bench/schema_read_bench.py: Spark rows/s reading Avro into struct columns vs the same records raw."""
    method = result["method"]
    labels = ["raw (binary)", "avro (struct)", "AvroCodec\n.decode_many"]
    rates = [result["rows_per_s"]["raw"], result["rows_per_s"]["avro"], result["codec_rows_per_s"]]
    colors = ["#888888", "#1f77b4", "#2ca02c"]
    if result.get("codec_compiled_rows_per_s"):  # the compiled kernel (absent from older results)
        labels.append("AvroCodec\n.decode_arrow (C)")
        rates.append(result["codec_compiled_rows_per_s"])
        colors.append("#d62728")
    fig = _figure(8, 5)
    ax = fig.subplots()
    bars = ax.bar(labels, rates, color=colors)
    _label_bars(ax, bars, [f"{r:,}" for r in rates])
    _thousands(ax)
    ax.set_ylabel("rows/s (best round)")
    ax.set_xlabel("reader (the same Avro records)")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(
        f"Spark read of {method['records']:,} records ({method['partitions']} partitions, local[2], noop sink)\n"
        f"valueFormat=avro: {result['avro_to_raw']:.0%} of the raw read (codec alone: one process)"
    )
    return fig


FIGURES: dict[str, Callable[[dict], Figure]] = {
    "aio_producer": aio_producer,
    "broker": broker,
    "client": client,
    "datasource": datasource,
    "groups": groups,
    "kafka_compare": kafka_compare,
    "log": log,
    "quota": quota,
    "rebalance": rebalance,
    "records": records,
    "replication": replication,
    "schema_read": schema_read,
    "streaming": streaming,
    "tls": tls,
    "txn": txn,
    "write": write,
}


def save(name: str, result: dict[str, Any], path: Path) -> Figure:
    """Draw figure ``name`` from its parsed JSON ``result`` and write it as a PNG to ``path`` (Agg, ``DPI``);
    the returned figure keeps that drawing's layout and renderer (``fig.canvas.get_renderer()``)."""
    fig = FIGURES[name](result)
    fig.savefig(path)
    return fig


def replot(names: Sequence[str] = (), results: Path = RESULTS) -> list[Path]:
    """Redraw ``<name>.png`` from ``<name>.json`` in ``results`` for ``names`` (default: every figure)."""
    written = []
    for name in names or FIGURES:
        source = results / f"{name}.json"
        if not source.exists():
            print(f"{name}: no {source}, skipped", file=sys.stderr)
            continue
        path = results / f"{name}.png"
        save(name, json.loads(source.read_text()), path)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="redraw bench PNGs from their JSON results (no benchmark runs)")
    parser.add_argument("names", nargs="*", help=f"figures to redraw (default: all): {', '.join(FIGURES)}")
    parser.add_argument("--results", type=Path, default=RESULTS, help="directory of <name>.json and <name>.png")
    args = parser.parse_args(argv)
    if unknown := [n for n in args.names if n not in FIGURES]:
        parser.error(f"no figure named {', '.join(unknown)}; figures: {', '.join(FIGURES)}")
    for path in replot(args.names, args.results):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
