"""AlterUserScramCredentials (key 51), v0 (KIP-554; `kafka-configs --bootstrap-server ... --alter --entity-type
users`): upserts and deletes SCRAM credentials in the user entity configs (``/config/users/<u>``, Kafka's
``salt=..,stored_key=..,server_key=..,iterations=..`` strings; the user's other keys, quotas, are kept), each
write leaving a ``users/<u>`` change notification that every broker's credential cache applies. The client sends
the salt and the salted password (the password never travels); the broker derives the stored and server keys.

As Kafka 3.9 in ZooKeeper mode, only the active controller serves it: any other broker answers NOT_CONTROLLER
for every user (no forwarding; Kafka's admin client sends it to the controller named by Metadata and retries).
One result per user, in request order. Per user: UNACCEPTABLE_CREDENTIAL for an empty name, iterations outside
4096..16384, an empty salt or a salted password that is not the mechanism's digest size (these two Kafka
stores, though no client could ever log in with them);
UNSUPPORTED_SASL_MECHANISM for a mechanism other than 1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512);
DUPLICATE_RESOURCE when a user's mechanism is altered twice in the request (deleted and upserted, or twice
either way); RESOURCE_NOT_FOUND for deleting a credential the user does not have; UNKNOWN_SERVER_ERROR when
the registry write fails. A user with any error is left unchanged. Authorization: Alter on the cluster,
checked after the controller check (Kafka's order), else every distinct user, sorted, answers
CLUSTER_AUTHORIZATION_FAILED "Cluster authorization failed.".
"""

from __future__ import annotations

from collections import Counter

from broker.cluster.registry import RegistryError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation
from spark_kafkalog.security.sasl.scram import MAX_ITERATIONS, ScramCredential, ScramMechanism

API_KEY = ApiKey.ALTER_USER_SCRAM_CREDENTIALS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


def _mechanism(wire_type: int) -> ScramMechanism | None:
    try:
        return ScramMechanism.from_wire_type(wire_type)
    except ValueError:
        return None


def _deletion_error(d) -> tuple[int, str] | None:
    if not d.name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if _mechanism(d.mechanism) is None:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, f"Unknown SCRAM mechanism type {d.mechanism}"
    return None


def _upsertion_error(u) -> tuple[int, str] | None:
    if not u.name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    mechanism = _mechanism(u.mechanism)
    if mechanism is None:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, f"Unknown SCRAM mechanism type {u.mechanism}"
    if not mechanism.min_iterations <= u.iterations <= MAX_ITERATIONS:
        return (
            ErrorCode.UNACCEPTABLE_CREDENTIAL,
            f"Iterations {u.iterations} not in the range {mechanism.min_iterations}..{MAX_ITERATIONS} of "
            f"{mechanism.mechanism_name}",
        )
    if not u.salt:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Salt must not be empty"
    if len(u.salted_password) != mechanism.digest_size:
        return (
            ErrorCode.UNACCEPTABLE_CREDENTIAL,
            f"Salted password must be {mechanism.digest_size} bytes for {mechanism.mechanism_name}",
        )
    return None


def not_controller(request) -> object:
    """Kafka's ``getErrorResponse``: NOT_CONTROLLER for each distinct user of the request, sorted."""
    return error_response(request, ErrorCode.NOT_CONTROLLER, "This is not the correct controller for this cluster.")


def error_response(request, code: int, message: str) -> object:
    """Kafka's ``getErrorResponse``: ``code`` and ``message`` for each distinct user of the request, sorted."""
    R = _API.Response
    users = sorted({d.name for d in request.deletions} | {u.name for u in request.upsertions})
    return R(
        throttle_time_ms=0,
        results=[R.AlterUserScramCredentialsResult(user=u, error_code=code, error_message=message) for u in users],
    )


async def handle(ctx, request):
    services = ctx.services
    if not services.controller.is_active:
        return not_controller(request)
    if not ctx.authorize_cluster(AclOperation.ALTER):
        return error_response(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    R = _API.Response
    order = list(dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions]))
    errors: dict[str, tuple[int, str]] = {}
    for item, check in [(d, _deletion_error) for d in request.deletions] + [
        (u, _upsertion_error) for u in request.upsertions
    ]:
        problem = check(item)
        if problem is not None:
            errors.setdefault(item.name, problem)
    pairs = Counter(
        (item.name, item.mechanism) for item in [*request.deletions, *request.upsertions] if item.name not in errors
    )
    for (user, _), count in pairs.items():
        if count > 1:
            errors.setdefault(
                user, (ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request")
            )
    for user in order:
        if user in errors:
            continue
        deleted = [ScramMechanism.from_wire_type(d.mechanism) for d in request.deletions if d.name == user]
        upserted = [u for u in request.upsertions if u.name == user]
        try:
            if deleted:
                current = await services.run_blocking(services.registry.user_config, user)
                if any(m.mechanism_name not in current for m in deleted):
                    errors[user] = (
                        ErrorCode.RESOURCE_NOT_FOUND,
                        "Attempt to delete a user credential that does not exist",
                    )
                    continue
            updates: dict[str, str | None] = {m.mechanism_name: None for m in deleted}
            for u in upserted:
                mechanism = ScramMechanism.from_wire_type(u.mechanism)
                credential = ScramCredential.from_salted_password(mechanism, u.salted_password, u.salt, u.iterations)
                updates[mechanism.mechanism_name] = credential.to_kafka_string()
            await services.run_blocking(services.registry.alter_user_config, user, updates)
        except (RegistryError, ValueError) as exc:
            errors[user] = (ErrorCode.UNKNOWN_SERVER_ERROR, f"Could not alter the credentials of {user!r}: {exc}")
    results = []
    for user in order:
        code, message = errors.get(user, (ErrorCode.NONE, None))
        results.append(R.AlterUserScramCredentialsResult(user=user, error_code=code, error_message=message))
    return R(throttle_time_ms=0, results=results)
