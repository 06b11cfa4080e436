"""FindCoordinator's shared request and answer (``core.coordinator``): every version's body round-trips through
the wire codec with the key where that version carries it, and answers are read (and refused) by version."""

from __future__ import annotations

import pytest

from spark_kafkalog.client.core.coordinator import (
    FIND_BATCHED_FROM,
    GROUP_KEY_TYPE,
    TRANSACTION_KEY_TYPE,
    FoundCoordinator,
    coordinator_error,
    find_coordinator_request,
    parse_find_coordinator,
)
from spark_kafkalog.client.errors import GroupAuthorizationFailedError, KafkaClientError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.messages import decode_request, encode_request

SPEC = API_BY_KEY[int(ApiKey.FIND_COORDINATOR)]
R = SPEC.Response


@pytest.mark.parametrize(
    ("version", "key_type"),
    [(v, GROUP_KEY_TYPE) for v in range(SPEC.min_version, SPEC.max_version + 1)]
    + [(v, TRANSACTION_KEY_TYPE) for v in range(1, SPEC.max_version + 1)],  # v0 has no key type
)
def test_the_request_carries_the_key_where_its_version_does(version, key_type):
    frame = encode_request(int(ApiKey.FIND_COORDINATOR), version, 7, find_coordinator_request(version, "g-1", key_type))
    body = decode_request(frame).body
    if version >= FIND_BATCHED_FROM:
        assert list(body.coordinator_keys) == ["g-1"]
    else:
        assert body.key == "g-1"
    if version >= 1:
        assert body.key_type == key_type


@pytest.mark.parametrize(
    ("version", "response", "expected"),
    [
        (0, R(error_code=0, error_message=None, node_id=3, host="h", port=1), FoundCoordinator(0, None, 3)),
        (
            3,
            R(error_code=15, error_message="loading", node_id=-1, host="", port=-1),
            FoundCoordinator(15, "loading", -1),
        ),
        (
            4,
            R(coordinators=[R.Coordinator(key="g-1", node_id=2, host="h", port=1, error_code=0, error_message=None)]),
            FoundCoordinator(0, None, 2),
        ),
    ],
)
def test_answers_are_read_by_version(version, response, expected):
    assert parse_find_coordinator(version, response, "g-1") == expected


@pytest.mark.parametrize(
    "coordinators",
    [[], [R.Coordinator(key="other", node_id=1, host="h", port=1, error_code=0, error_message=None)]],
)
def test_a_batched_answer_for_another_key_set_is_refused(coordinators):
    with pytest.raises(KafkaClientError, match="answered another key set"):
        parse_find_coordinator(FIND_BATCHED_FROM, R(coordinators=coordinators), "g-1")


def test_errors_name_the_key_or_what_the_broker_said():
    moving = coordinator_error(FoundCoordinator(int(ErrorCode.COORDINATOR_NOT_AVAILABLE), "loading", -1), "g-1")
    assert moving.retriable and "'g-1': loading" in str(moving)
    denied = coordinator_error(FoundCoordinator(int(ErrorCode.GROUP_AUTHORIZATION_FAILED), "no", -1), "g-1")
    assert isinstance(denied, GroupAuthorizationFailedError) and not denied.retriable
