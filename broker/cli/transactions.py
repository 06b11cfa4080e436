"""``kafkalog transactions``: Kafka's ``kafka-transactions.sh`` for kafkalog (and any Kafka cluster).

``transactions list [--state S] [--producer-id N]`` asks every broker (ListTransactions) and prints
``TransactionalId Coordinator ProducerId TransactionState``, one line per transactional id; ``transactions
describe --transactional-id T`` asks the id's coordinator (FindCoordinator key type 1, then
DescribeTransactions) and prints ``CoordinatorId TransactionalId ProducerId ProducerEpoch TransactionState
CurrentTransactionStartTimeMs TransactionDurationMs TopicPartitions`` as Kafka's tool does.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

_TXN_KEY_TYPE = 1


def add_parser(sub: Any) -> None:
    tp = sub.add_parser("transactions", help="list or describe transactional ids (kafka-transactions.sh)")
    tp.add_argument("action", choices=("list", "describe"))
    tp.add_argument("--bootstrap-server", required=True)
    tp.add_argument("--transactional-id", help="describe: the transactional id")
    tp.add_argument("--state", action="append", help="list: only transactions in this state (repeatable), e.g. Ongoing")
    tp.add_argument("--producer-id", type=int, action="append", help="list: only this producer id (repeatable)")
    tp.set_defaults(func=cmd_transactions)


def usage_error(args: argparse.Namespace) -> str | None:
    if args.action == "describe" and not args.transactional_id:
        return "transactions describe needs --transactional-id"
    return None


def _table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    for row in (header, *rows):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


def _list(client: Any, args: argparse.Namespace) -> int:
    from spark_kafkalog.client import KafkaClientError
    from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

    R = API_BY_KEY[ApiKey.LIST_TRANSACTIONS].Request
    body = R(state_filters=args.state or [], producer_id_filters=args.producer_id or [], duration_filter=-1)
    client.refresh_metadata([])
    rows = []
    for node in sorted(client.metadata.brokers):
        try:
            _, response = client.send_request(ApiKey.LIST_TRANSACTIONS, body, node_id=node)
        except KafkaClientError as e:
            print(f"kafkalog: warning: broker {node} did not answer ListTransactions: {e}", file=sys.stderr)
            continue
        if response.error_code != ErrorCode.NONE:
            print(f"kafkalog: warning: broker {node}: {ErrorCode(response.error_code).name}", file=sys.stderr)
            continue
        if response.unknown_state_filters:
            print(f"kafkalog: unknown transaction states: {', '.join(response.unknown_state_filters)}", file=sys.stderr)
            return 2
        for t in response.transaction_states:
            rows.append([t.transactional_id, str(node), str(t.producer_id), t.transaction_state])
    _table(["TransactionalId", "Coordinator", "ProducerId", "TransactionState"], sorted(rows))
    return 0


def _describe(client: Any, args: argparse.Namespace) -> int:
    from spark_kafkalog.client.errors import error_for_code
    from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

    tid = args.transactional_id
    F = API_BY_KEY[ApiKey.FIND_COORDINATOR].Request

    def find(version: int) -> Any:
        return F(key_type=_TXN_KEY_TYPE, coordinator_keys=[tid]) if version >= 4 else F(key=tid, key_type=_TXN_KEY_TYPE)

    version, found = client.send_request(ApiKey.FIND_COORDINATOR, find, min_version=1)
    found = found.coordinators[0] if version >= 4 else found
    if found.error_code != ErrorCode.NONE:
        raise error_for_code(found.error_code, "FindCoordinator", detail=f"transactional id {tid!r}")
    if client.broker_address(found.node_id) is None:
        client.refresh_metadata_once([])
    R = API_BY_KEY[ApiKey.DESCRIBE_TRANSACTIONS].Request
    _, response = client.send_request(ApiKey.DESCRIBE_TRANSACTIONS, R(transactional_ids=[tid]), node_id=found.node_id)
    (state,) = response.transaction_states
    if state.error_code != ErrorCode.NONE:
        raise error_for_code(state.error_code, "DescribeTransactions", detail=f"transactional id {tid!r}")
    start = state.transaction_start_time_ms
    duration = str(int(time.time() * 1000) - start) if start >= 0 else "None"
    partitions = ",".join(f"{t.topic}-{p}" for t in state.topics for p in t.partitions)
    _table(
        [
            "CoordinatorId",
            "TransactionalId",
            "ProducerId",
            "ProducerEpoch",
            "TransactionState",
            "TransactionTimeoutMs",
            "CurrentTransactionStartTimeMs",
            "TransactionDurationMs",
            "TopicPartitions",
        ],
        [
            [
                str(found.node_id),
                tid,
                str(state.producer_id),
                str(state.producer_epoch),
                state.transaction_state,
                str(state.transaction_timeout_ms),
                str(start) if start >= 0 else "None",
                duration,
                partitions,
            ]
        ],
    )
    return 0


def cmd_transactions(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import KafkaClient, KafkaClientError

    try:
        with KafkaClient(args.bootstrap_server) as client:
            return _list(client, args) if args.action == "list" else _describe(client, args)
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
