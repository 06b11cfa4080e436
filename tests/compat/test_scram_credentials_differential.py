"""Differential check of DescribeUserScramCredentials (50) and AlterUserScramCredentials (51): the same raw
requests to kafkalog and to Apache Kafka 3.9 in ZooKeeper mode, the mode kafkalog follows, their answers
compared field by field (``tests/compat/differential.py``; per-user results compared in user order: Kafka lists
successes in a hash set's order). Kafka 4's KRaft controller answers differently by design (a user named twice
in one request is DUPLICATE_RESOURCE even for two mechanisms; other result orders), so 4.4 is not the oracle. Not compared: an empty salt and a salted password of the wrong size, which Kafka stores (a
credential no client can ever log in with) and kafkalog refuses as UNACCEPTABLE_CREDENTIAL."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey

from .differential import ALLOWANCES, Allowance, Step, differences

pytestmark = pytest.mark.compat

K = ApiKey
BY_USER = Allowance(
    "scram-results-by-user",
    "Kafka 3.9 lists an AlterUserScramCredentials answer's users by outcome, successes in a hash set's order;"
    " kafkalog in request order; clients look results up by user",
    frozenset({"results"}),
    lambda value, state: sorted(value, key=lambda r: r["user"]),
    frozenset({"AlterUserScramCredentials"}),
)


def alter(label: str, deletions=(), upsertions=()) -> Step:
    body = API_BY_KEY[K.ALTER_USER_SCRAM_CREDENTIALS].Request.from_dict(
        {"deletions": [dict(name=n, mechanism=m) for n, m in deletions], "upsertions": list(upsertions)}
    )
    return Step(label, K.ALTER_USER_SCRAM_CREDENTIALS, 0, body)


def upsert(name: str, mechanism: int = 1, iterations: int = 4096, password: str = "pw") -> dict:
    hash_name = {1: "sha256", 2: "sha512"}.get(mechanism, "sha256")
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), b"salt", max(iterations, 1))
    return dict(name=name, mechanism=mechanism, iterations=iterations, salt=b"salt", salted_password=salted)


def describe(label: str, users: list[str]) -> Step:
    body = API_BY_KEY[K.DESCRIBE_USER_SCRAM_CREDENTIALS].Request.from_dict({"users": [{"name": u} for u in users]})
    return Step(label, K.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, body)


@pytest.mark.parametrize("kafka", ["kafka-3.9"], indirect=True)
def test_scram_credential_apis_answer_as_kafka_does(kafkalog, kafka):
    t = uuid.uuid4().hex[:8]
    a, b, c, d, e = (f"{x}-{t}" for x in "abcde")
    steps = [
        alter("upsert three credentials", upsertions=[upsert(a, 1, 8192), upsert(b, 2), upsert(b, 1, 5000)]),
        describe("describe both", [a, b]),
        describe("describe missing, twice and empty", [a, c, d, d, ""]),
        alter(
            "alter errors",
            deletions=[(c, 1), (a, 1), (e, 7)],
            upsertions=[upsert(a, 1), upsert(d, 3), upsert(b, 2, 4095), upsert(f"f-{t}", 1, 16385)],
        ),
        alter("upsert twice", upsertions=[upsert(c, 2), upsert(c, 2, 4096, "other")]),
        alter("empty name", upsertions=[upsert("", 1)]),
        alter("delete one of two", deletions=[(b, 2)]),
        describe("describe after", [a, b, c]),
    ]
    found = differences(kafkalog.bootstrap_servers, kafka.bootstrap_servers, steps, allowances=(*ALLOWANCES, BY_USER))
    assert not found, f"kafkalog and Kafka {kafka.version} differ at {found[0]}" + "".join(
        f"\n  also {x}" for x in found[1:]
    )
