"""The differ of the differential checks (``tests/compat/differential.py``) without a broker: paths of
differences, the allow-list's rewrites, record decoding, and known differences held strictly."""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.records.batch_builder import build_batch

from .differential import ALLOWANCES, Exchange, Step, compare_runs, iter_differences, normalize

K = ApiKey


def test_differences_are_reported_by_path_in_declaration_order():
    left = {"responses": [{"partitions": [{"error_code": 0}, {"error_code": 3, "offset": 1}]}]}
    right = {"responses": [{"partitions": [{"error_code": 0}, {"error_code": 6, "offset": 2}]}]}
    assert list(iter_differences(left, right)) == [
        ("responses[0].partitions[1].error_code", 3, 6),
        ("responses[0].partitions[1].offset", 1, 2),
    ]
    assert list(iter_differences([1, 2], [1])) == [("length", 2, 1)]


def test_broker_ids_are_normalized_but_no_node_is_kept():
    value = {"leader_id": 7, "replica_nodes": [7, -1], "controller_id": -1}
    assert normalize("Metadata", value, ALLOWANCES, {}) == {
        "leader_id": "<node>",
        "replica_nodes": ["<node>", -1],
        "controller_id": -1,
    }


def test_member_ids_are_renumbered_in_order_of_appearance():
    state: dict = {}
    value = {"leader": "b-2", "member_id": "a-1", "members": [{"member_id": "b-2"}, {"member_id": "a-1"}]}
    assert normalize("JoinGroup", value, ALLOWANCES, state) == {
        "leader": "<member#0>",
        "member_id": "<member#1>",
        "members": [{"member_id": "<member#0>"}, {"member_id": "<member#1>"}],
    }


def test_fetched_records_are_compared_as_decoded_batches():
    data = bytes(build_batch([(1000, b"k", b"v", [("h", b"x")])], producer_id=42, producer_epoch=0, base_sequence=0))
    (batch,) = normalize("Fetch", {"records": data}, ALLOWANCES, {})["records"]
    assert (batch["base_offset"], batch["producer_id"], batch["crc"]) == (0, "<producer#0>", "<crc>")
    assert batch["records"] == [{"offset": 0, "timestamp": 1000, "key": b"k", "value": b"v", "headers": [("h", b"x")]}]


def heartbeat_run(error_code: int, differs: str | None = None) -> list[Exchange]:
    step = Step("heartbeat", K.HEARTBEAT, 3, differs=differs)
    return [Exchange(step, 1000, API_BY_KEY[K.HEARTBEAT].Response(throttle_time_ms=5, error_code=error_code))]


def test_compare_runs_names_the_step_and_ignores_allowed_fields():
    assert compare_runs(heartbeat_run(0), heartbeat_run(0)) == []
    assert compare_runs(heartbeat_run(25), heartbeat_run(22)) == [
        "step 'heartbeat' (Heartbeat v3): error_code: kafkalog 25 != kafka 22"
    ]


def test_a_known_difference_must_still_differ():
    known = "lenient-client-software-name"
    assert compare_runs(heartbeat_run(25, known), heartbeat_run(22, known)) == []
    (report,) = compare_runs(heartbeat_run(0, known), heartbeat_run(0, known))
    assert "the same answers, but listed as known difference" in report
