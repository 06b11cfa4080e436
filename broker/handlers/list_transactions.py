"""ListTransactions (key 66), v0-2: the transactional ids this broker coordinates, filtered by state names
(Kafka's: Empty, Ongoing, PrepareCommit...; unknown names come back in ``unknown_state_filters``), producer
ids, (v1) a minimum running time in ms (only transactions with a start time at least that old) and (v2,
KIP-1152) a regular expression the whole transactional id must match (Java's ``Pattern.matches``; here Python's
``re.fullmatch``, the same for the common syntax; null or empty: no filter); one that does not compile is
INVALID_REGULAR_EXPRESSION with nothing listed.
COORDINATOR_LOAD_IN_PROGRESS while a partition is loading. Authorization: only the transactional ids the
principal may DESCRIBE are listed, silently (Kafka's ``handleListTransactionsRequest``).
"""

from __future__ import annotations

import re

from broker.coordinator.txn_metadata import TxnState
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._txns import txn_id_authorized

API_KEY = ApiKey.LIST_TRANSACTIONS
VERSIONS = (0, 2)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    tc = ctx.services.txn_coordinator
    states = {s for s in (TxnState.from_display(n) for n in request.state_filters) if s is not None}
    unknown = [n for n in request.state_filters if TxnState.from_display(n) is None]
    if tc.topic.loading:
        code = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return Resp(throttle_time_ms=0, error_code=code, unknown_state_filters=unknown, transaction_states=[])
    pattern = None
    if ctx.version >= 2 and request.transactional_id_pattern:
        try:
            pattern = re.compile(request.transactional_id_pattern)
        except re.error:
            code = ErrorCode.INVALID_REGULAR_EXPRESSION
            return Resp(throttle_time_ms=0, error_code=code, unknown_state_filters=unknown, transaction_states=[])
    if request.state_filters and not states:
        found = []
    else:
        found = tc.list_transactions(
            states or None, set(request.producer_id_filters) or None, getattr(request, "duration_filter", -1)
        )
    if pattern is not None:
        found = [m for m in found if pattern.fullmatch(m.transactional_id)]
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        unknown_state_filters=unknown,
        transaction_states=[
            Resp.TransactionState(
                transactional_id=m.transactional_id, producer_id=m.producer_id, transaction_state=m.state.display
            )
            for m in found
            if txn_id_authorized(ctx, AclOperation.DESCRIBE, m.transactional_id)
        ],
    )
