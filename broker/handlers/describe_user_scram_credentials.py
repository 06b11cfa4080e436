"""DescribeUserScramCredentials (key 50), v0 (KIP-554; `kafka-configs --describe --entity-type users`): the
SCRAM mechanisms and iteration counts stored for each user, read from the user entity configs
(``/config/users/<u>``) as Kafka's ZooKeeper-mode brokers read them; any broker answers. A null or empty user
list describes every user that has credentials (sorted by name); a named user without any gets
RESOURCE_NOT_FOUND, an empty name RESOURCE_NOT_FOUND, a name asked twice DUPLICATE_RESOURCE (one result per
distinct name, in request order). A stored credential that does not parse: UNKNOWN_SERVER_ERROR for that user;
the registry unreachable: the top-level error. Authorization: Describe on the cluster, else the top-level
error and one result per requested user (with an empty user name, as Kafka's ``getErrorResponse``) are
CLUSTER_AUTHORIZATION_FAILED "Cluster authorization failed.".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from broker.cluster.registry import RegistryError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation
from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism

API_KEY = ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]
_Result = _API.Response.DescribeUserScramCredentialsResult


def _result(user: str, config: Mapping[str, str], named: bool) -> object | None:
    """The user's result; None for an unnamed user (describe-all) without credentials."""
    infos = []
    for mechanism in ScramMechanism:  # Kafka's order: SCRAM-SHA-256, then SCRAM-SHA-512
        text = config.get(mechanism.mechanism_name)
        if text is None:
            continue
        try:
            iterations = ScramCredential.from_kafka_string(text).iterations
        except ValueError as exc:
            return _Result(
                user=user,
                error_code=ErrorCode.UNKNOWN_SERVER_ERROR,
                error_message=f"Error retrieving credentials: {mechanism.mechanism_name}: {exc}",
            )
        infos.append(_Result.CredentialInfo(mechanism=mechanism.wire_type, iterations=iterations))
    if infos:
        return _Result(user=user, error_code=ErrorCode.NONE, credential_infos=infos)
    if not named:
        return None
    return _Result(
        user=user,
        error_code=ErrorCode.RESOURCE_NOT_FOUND,
        error_message=f"Attempt to describe a user credential that does not exist: {user}",
    )


async def handle(ctx, request):
    services = ctx.services
    R = _API.Response
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        code, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
        return R(
            throttle_time_ms=0,
            error_code=code,
            error_message=message,
            results=[_Result(user="", error_code=code, error_message=message) for _ in request.users or []],
        )
    try:
        if not request.users:
            configs = await services.run_blocking(services.registry.user_configs)
            results = [r for user in sorted(configs) if (r := _result(user, configs[user], False)) is not None]
            return R(throttle_time_ms=0, error_code=ErrorCode.NONE, results=results)
        names = [u.name for u in request.users]
        counts = Counter(names)
        results = []
        for user in dict.fromkeys(names):
            if not user:
                results.append(
                    _Result(
                        user=user,
                        error_code=ErrorCode.RESOURCE_NOT_FOUND,
                        error_message="Cannot describe SCRAM credentials for empty username",
                    )
                )
            elif counts[user] > 1:
                results.append(
                    _Result(
                        user=user,
                        error_code=ErrorCode.DUPLICATE_RESOURCE,
                        error_message=f"Cannot describe SCRAM credentials for the same user twice in a single "
                        f"request: {user}",
                    )
                )
            else:
                config = await services.run_blocking(services.registry.user_config, user)
                results.append(_result(user, config, True))
    except RegistryError as exc:
        return R(throttle_time_ms=0, error_code=ErrorCode.UNKNOWN_SERVER_ERROR, error_message=str(exc), results=[])
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, results=results)
