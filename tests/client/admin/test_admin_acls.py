"""admin_acls: CreateAcls, DescribeAcls and DeleteAcls bodies through the wire codec at every version (v0 carries no
pattern type; PREFIXED needs v1, USER v3), responses parsed into bindings and per-binding / per-filter errors,
local refusals of bindings and filters that cannot be sent, and Kafka's toString of filters."""

from __future__ import annotations

from typing import Any

import pytest

from spark_kafkalog.client.admin import admin_acls
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.messages import decode_request, decode_response, encode_request, encode_response
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

T, G, U = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.USER
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
Op = AclOperation


def binding(name="t", op=Op.READ, *, rtype=T, ptype=LIT, principal="User:alice", host="*", perm=ALLOW) -> AclBinding:
    return AclBinding(ResourcePattern(rtype, name, ptype), AccessControlEntry(principal, host, op, perm))


class Wire:
    """A send callable that puts the request through the codec at ``max(min_version, floor)`` .. ``top``: the
    broker's side is ``answer(api_key, decoded request) -> response body``; its response goes through the codec
    too. Records each (api_key, version, decoded request)."""

    def __init__(self, answer, top: int = 3) -> None:
        self.answer, self.top = answer, top
        self.sent: list[tuple[int, int, Any]] = []

    def __call__(self, api_key: int, build, *, min_version: int = 0, what: str) -> tuple[int, Any, str]:
        if min_version > self.top:
            raise KafkaClientError(f"{what} needs v{min_version}, the broker has v{self.top}")
        version = self.top
        request = decode_request(encode_request(api_key, version, 7, build(version))).body
        self.sent.append((api_key, version, request))
        body = self.answer(api_key, request)
        _, response = decode_response(api_key, version, encode_response(api_key, version, 7, body))
        return version, response, "b1:9092"


def response(api_key: int, **fields: Any) -> Any:
    return API_BY_KEY[api_key].Response(throttle_time_ms=0, **fields)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_create_request_at_each_version(version):
    b = binding("orders", Op.WRITE, host="10.0.0.1", perm=DENY)
    wire = Wire(
        lambda k, req: response(k, results=[API_BY_KEY[ApiKey.CREATE_ACLS].Response.AclCreationResult(error_code=0)]),
        version,
    )
    assert admin_acls.create_acls(wire, [b]) == {}
    ((key, sent_version, req),) = wire.sent
    assert (key, sent_version) == (admin_acls.CREATE, version)
    (c,) = req.creations
    assert (c.resource_type, c.resource_name, c.principal, c.host, c.operation, c.permission_type) == (
        2, "orders", "User:alice", "10.0.0.1", 4, 2,
    )  # fmt: skip
    assert c.resource_pattern_type == 3  # v0: absent, decoded as the default LITERAL


@pytest.mark.parametrize(
    "bindings, lowest",
    [([binding()], 0), ([binding(ptype=PRE)], 1), ([binding(), binding("u", rtype=U, op=Op.CREATE_TOKENS)], 3)],
)
def test_create_needs_v1_for_prefixed_and_v3_for_user(bindings, lowest):
    ok = API_BY_KEY[ApiKey.CREATE_ACLS].Response.AclCreationResult(error_code=0)
    wire = Wire(lambda k, req: response(k, results=[ok] * len(req.creations)), lowest)
    assert admin_acls.create_acls(wire, bindings) == {}
    if lowest > 0:
        with pytest.raises(KafkaClientError, match=f"needs v{lowest}"):
            admin_acls.create_acls(Wire(wire.answer, lowest - 1), bindings)


def test_create_errors_are_per_binding_with_the_brokers_message():
    good, bad = binding("t"), binding("", Op.READ)
    R = API_BY_KEY[ApiKey.CREATE_ACLS].Response

    def answer(k, req):
        return response(
            k,
            results=[
                R.AclCreationResult(error_code=0)
                if c.resource_name
                else R.AclCreationResult(error_code=ErrorCode.INVALID_REQUEST, error_message="Resource name is empty")
                for c in req.creations
            ],
        )

    errors = admin_acls.create_acls(Wire(answer), [good, bad])
    assert list(errors) == [bad]
    e = errors[bad]
    assert e.error_code is ErrorCode.INVALID_REQUEST and not e.retriable
    assert "Resource name is empty" in str(e) and "name=, patternType=LITERAL" in str(e)


@pytest.mark.parametrize(
    "bad, problem",
    [
        (binding(ptype=PatternType.MATCH), "pattern type must be specific, not MATCH"),
        (binding(ptype=PatternType.ANY), "pattern type must be specific, not ANY"),
        (binding(rtype=ResourceType.ANY), "resource type must be specific, not ANY"),
        (binding(op=Op.ANY), "operation must be specific, not ANY"),
        (binding(op=Op.UNKNOWN), "operation must be specific, not UNKNOWN"),
        (binding(perm=AclPermissionType.ANY), "permission type must be specific, not ANY"),
    ],
)
def test_bindings_that_cannot_exist_fail_locally_and_the_others_are_sent(bad, problem):
    ok = API_BY_KEY[ApiKey.CREATE_ACLS].Response.AclCreationResult(error_code=0)
    wire = Wire(lambda k, req: response(k, results=[ok] * len(req.creations)))
    errors = admin_acls.create_acls(wire, [bad, binding("other")])
    assert list(errors) == [bad] and errors[bad].error_code is ErrorCode.INVALID_REQUEST
    assert problem in str(errors[bad])
    assert [c.resource_name for c in wire.sent[0][2].creations] == ["other"]


def describe_answer(resources: list[tuple[int, str, int, list[tuple[str, str, int, int]]]], error=0, message=None):
    R = API_BY_KEY[ApiKey.DESCRIBE_ACLS].Response

    def answer(k, req):
        return response(
            k,
            error_code=error,
            error_message=message,
            resources=[
                R.DescribeAclsResource(
                    resource_type=rt,
                    resource_name=name,
                    pattern_type=pt,
                    acls=[
                        R.DescribeAclsResource.AclDescription(principal=p, host=h, operation=o, permission_type=perm)
                        for p, h, o, perm in acls
                    ],
                )
                for rt, name, pt, acls in resources
            ],
        )

    return answer


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_describe_request_and_response_at_each_version(version):
    acl_filter = AclBindingFilter(
        ResourcePatternFilter(T, "orders", PatternType.ANY), AccessControlEntryFilter("User:alice", None, Op.READ)
    )
    answer = describe_answer([(2, "orders", 3, [("User:alice", "*", 3, 3), ("User:alice", "10.0.0.1", 3, 2)])])
    wire = Wire(answer, version)
    got = admin_acls.describe_acls(wire, acl_filter)
    assert got == [binding("orders"), binding("orders", host="10.0.0.1", perm=DENY)]
    req = wire.sent[0][2]
    assert (req.resource_type_filter, req.resource_name_filter, req.principal_filter, req.host_filter) == (
        2, "orders", "User:alice", None,
    )  # fmt: skip
    assert (req.operation, req.permission_type) == (3, 1)
    assert req.pattern_type_filter == (1 if version >= 1 else 3)  # v0: ANY goes as LITERAL, as Kafka's client does


def test_describe_match_filter_needs_v1_and_reads_prefixed_and_unknown_codes():
    answer = describe_answer([(3, "g-", 4, [("User:*", "*", 99, 3)])])
    match = AclBindingFilter(ResourcePatternFilter(G, "g-1", PatternType.MATCH))
    with pytest.raises(KafkaClientError, match="needs v1"):
        admin_acls.describe_acls(Wire(answer, 0), match)
    (got,) = admin_acls.describe_acls(Wire(answer, 1), match)
    assert got.pattern == ResourcePattern(G, "g-", PRE) and got.entry.operation is Op.UNKNOWN


@pytest.mark.parametrize(
    "code, message",
    [
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured on the broker"),
        (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None),
    ],
)
def test_describe_raises_the_top_level_error(code: ErrorCode, message):
    with pytest.raises(KafkaClientError) as e:
        admin_acls.describe_acls(Wire(describe_answer([], code, message)), AclBindingFilter())
    assert e.value.error_code is code and not e.value.retriable
    assert code.name in str(e.value) and (message or "") in str(e.value)


def test_describe_refuses_an_unknown_filter_without_sending():
    wire = Wire(describe_answer([]))
    with pytest.raises(KafkaClientError, match="operation is UNKNOWN") as e:
        admin_acls.describe_acls(wire, AclBindingFilter(entry=AccessControlEntryFilter(operation=Op.UNKNOWN)))
    assert e.value.error_code is ErrorCode.INVALID_REQUEST and wire.sent == []


def test_delete_results_per_filter_and_per_acl():
    R = API_BY_KEY[ApiKey.DELETE_ACLS].Response
    f_ok = AclBindingFilter(ResourcePatternFilter(T, "t", LIT))
    f_err = AclBindingFilter(ResourcePatternFilter(G, "g", PRE))
    f_local = AclBindingFilter(ResourcePatternFilter(ResourceType.UNKNOWN, "x"))

    def matching(code, name, op):
        return R.DeleteAclsFilterResult.DeleteAclsMatchingAcl(
            error_code=code, error_message="zk down" if code else None, resource_type=2, resource_name=name,
            pattern_type=3, principal="User:alice", host="*", operation=op, permission_type=3,
        )  # fmt: skip

    def answer(k, req):
        assert [f.resource_type_filter for f in req.filters] == [2, 3]
        assert [f.pattern_type_filter for f in req.filters] == [3, 4]
        return response(
            k,
            filter_results=[
                R.DeleteAclsFilterResult(
                    error_code=0, matching_acls=[matching(0, "t", 3), matching(ErrorCode.UNKNOWN_SERVER_ERROR, "t", 4)]
                ),
                R.DeleteAclsFilterResult(
                    error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message="denied", matching_acls=[]
                ),
            ],
        )

    ok, err, local = admin_acls.delete_acls(Wire(answer), [f_ok, f_err, f_local])
    assert (ok.filter, ok.deleted, ok.error) == (f_ok, [binding("t")], None)
    assert list(ok.failed) == [binding("t", Op.WRITE)] and "zk down" in str(ok.failed[binding("t", Op.WRITE)])
    assert err.error is not None and err.error.error_code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert "denied" in str(err.error) and err.deleted == []
    assert local.error is not None and local.error.error_code is ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize(
    "acl_filter, text",
    [
        (
            AclBindingFilter(),
            "(patternFilter=ResourcePattern(resourceType=ANY, name=<any>, patternType=ANY), "
            "entryFilter=(principal=<any>, host=<any>, operation=ANY, permissionType=ANY))",
        ),
        (
            AclBindingFilter(
                ResourcePatternFilter(T, "t", PRE), AccessControlEntryFilter("User:a", "*", Op.READ, ALLOW)
            ),
            "(patternFilter=ResourcePattern(resourceType=TOPIC, name=t, patternType=PREFIXED), "
            "entryFilter=(principal=User:a, host=*, operation=READ, permissionType=ALLOW))",
        ),
    ],
)
def test_filter_text_is_kafkas_tostring(acl_filter, text):
    assert admin_acls.filter_text(acl_filter) == text


def test_binding_text_is_kafkas_tostring():
    assert admin_acls.binding_text(binding()) == (
        "(pattern=ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL), "
        "entry=(principal=User:alice, host=*, operation=READ, permissionType=ALLOW))"
    )
