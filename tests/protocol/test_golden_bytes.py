"""Golden bytes for every (API, version) the target clients send, checked against kafka-python both ways.

``golden_bytes.json`` was produced by kafka-python 3.x's encoders (``make_golden.py``) from deterministic
samples that fill every field. Our encoder must produce the same bytes, our decoder must read them back
to the sample, and kafka-python (still installed in the test extras) must read our bytes and produce
them from the sample too, so a change on either side is caught.
"""

from __future__ import annotations

import json

import pytest

from spark_kafkalog.protocol import decode_request, decode_response, encode_request, encode_response

from .golden_cases import GOLDEN_CASES
from .kafka_python_oracle import build, message_class, to_ours
from .make_golden import CLIENT_ID, CORRELATION_ID, GOLDEN_FILE, api_by_name, golden_sample

GOLDEN = json.loads(GOLDEN_FILE.read_text())


def test_golden_file_covers_every_case():
    assert sorted(GOLDEN) == sorted(f"{n}/v{v}" for n, v in GOLDEN_CASES)


@pytest.mark.parametrize("name, version", GOLDEN_CASES, ids=[f"{n}-v{v}" for n, v in GOLDEN_CASES])
def test_request_golden_bytes_both_ways(name, version):
    api = api_by_name(name)
    golden = bytes.fromhex(GOLDEN[f"{name}/v{version}"]["request"])
    body = golden_sample(name, "request", version)
    assert encode_request(api.key, version, CORRELATION_ID, body, client_id=CLIENT_ID) == golden
    req = decode_request(golden)
    assert (req.header.correlation_id, req.header.client_id, req.body) == (CORRELATION_ID, CLIENT_ID, body)
    # kafka-python, independently: reads our bytes into the same values and writes the same bytes
    kp_cls = message_class(name + "Request")
    theirs = kp_cls.decode(golden, version=version, header=True)
    assert api.Request.from_dict(to_ours(api.request, theirs.to_dict(json=False))) == body
    kp = build(kp_cls, api.request, body.to_dict(), version=version)
    kp.with_header(correlation_id=CORRELATION_ID, client_id=CLIENT_ID)
    assert bytes(kp.encode(header=True)) == golden


@pytest.mark.parametrize("name, version", GOLDEN_CASES, ids=[f"{n}-v{v}" for n, v in GOLDEN_CASES])
def test_response_golden_bytes_both_ways(name, version):
    api = api_by_name(name)
    golden = bytes.fromhex(GOLDEN[f"{name}/v{version}"]["response"])
    body = golden_sample(name, "response", version)
    assert encode_response(api.key, version, CORRELATION_ID, body) == golden
    assert decode_response(api.key, version, golden) == (CORRELATION_ID, body)
    kp_cls = message_class(name + "Response")
    theirs = kp_cls.decode(golden, version=version, header=True)
    assert api.Response.from_dict(to_ours(api.response, theirs.to_dict(json=False))) == body
    kp = build(kp_cls, api.response, body.to_dict(), version=version)
    kp.with_header(correlation_id=CORRELATION_ID)
    assert bytes(kp.encode(header=True)) == golden
