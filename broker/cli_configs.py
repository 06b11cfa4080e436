"""``kafkalog configs describe|alter``: Kafka's ``kafka-configs.sh`` for kafkalog (topic and broker configs)."""

from __future__ import annotations

import sys
from typing import Any


def add_parser(sub: Any) -> None:
    pc = sub.add_parser("configs", help="describe or alter topic and broker configs (kafka-configs)")
    pc.add_argument("action", choices=("describe", "alter"))
    pc.set_defaults(func=cmd_configs)


def cmd_configs(args: Any) -> int:
    print("kafkalog: configs: not available yet", file=sys.stderr)
    return 1
