"""ListOffsets: version floors per spec and request/response handling at every version."""

from __future__ import annotations

import pytest

from spark_kafkalog.client.core.offsets import (
    check_spec,
    list_offsets_request,
    min_list_offsets_version,
    parse_list_offsets,
)
from spark_kafkalog.client.types import OffsetSpec, TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, decode_request, decode_response, encode_request, encode_response

TP = TopicPartition("t", 1)
LO = API_BY_KEY[2]


@pytest.mark.parametrize(
    "specs, isolation, floor",
    [
        ([OffsetSpec.LATEST, OffsetSpec.EARLIEST], 0, 0),
        ([OffsetSpec.LATEST], 1, 2),
        ([1_700_000_000_000], 0, 1),
        ([OffsetSpec.MAX_TIMESTAMP, 5], 1, 7),
    ],
)
def test_version_floor_follows_the_specs(specs, isolation, floor):
    assert min_list_offsets_version(specs, isolation) == floor


@pytest.mark.parametrize("bad", [-4, "latest", 1.5, True])
def test_bad_specs_are_rejected_naming_the_partition(bad):
    with pytest.raises(ValueError, match="offset spec for t-1"):
        check_spec(TP, bad)


def test_requests_encode_at_every_version_and_responses_parse_at_v0_and_v1_plus():
    body = list_offsets_request({TP: (OffsetSpec.LATEST, 4), TopicPartition("u", 0): (5, -1)}, 1)
    for version in range(0, 8):
        decoded = decode_request(encode_request(2, version, 1, body)).body
        assert sorted((t.name, p.partition_index, p.timestamp) for t in decoded.topics for p in t.partitions) == [
            ("t", 1, -1),
            ("u", 0, 5),
        ]
    R = LO.Response
    P = R.ListOffsetsTopicResponse.ListOffsetsPartitionResponse
    response = R(
        topics=[
            R.ListOffsetsTopicResponse(
                name="t",
                partitions=[P(partition_index=1, error_code=0, old_style_offsets=[42], offset=42, timestamp=9)],
            )
        ]
    )
    for version in (0, 1, 7):
        _, decoded = decode_response(2, version, encode_response(2, version, 1, response))
        result = parse_list_offsets(decoded, version)[TP]
        assert result.offset == 42
        assert result.timestamp == (-1 if version == 0 else 9)
