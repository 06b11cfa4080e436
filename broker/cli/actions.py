"""Actions named two ways: kafkalog's word (``kafkalog topics create``) and the Kafka tool's flag
(``kafka-topics.sh --create``), so that both ``kafkalog topics create --topic t`` and ``kafkalog topics
--create --topic t`` work. ``add_action`` declares them on a subcommand's parser; ``resolve`` (called once
after parsing) leaves the one chosen in ``args.action`` or says what is wrong. ``split_kv`` reads the
repeatable ``KEY=VALUE`` arguments.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def add_action(parser: argparse.ArgumentParser, choices: Sequence[str]) -> None:
    """An optional positional ``action`` (one of ``choices``) and a flag ``--<choice>`` for each."""
    # checked by resolve, not argparse: ``--unknown-flag 3`` then reports the flag, not "invalid choice: 3"
    parser.add_argument(
        "action", nargs="?", metavar="{" + ",".join(choices) + "}", help="what to do (or one of the flags below)"
    )
    flags = parser.add_argument_group("the same actions as Kafka's tool spells them")
    for choice in choices:
        flags.add_argument(
            f"--{choice}", dest="action_flags", action="append_const", const=choice, help=f"same as `{choice}`"
        )
    parser.set_defaults(action_flags=None, action_choices=(parser.prog, tuple(choices)))


def resolve(args: argparse.Namespace) -> str | None:
    """Set ``args.action`` from the word or the flag; a usage problem (none or two actions) otherwise."""
    spec = getattr(args, "action_choices", None)
    if spec is None:
        return None
    prog, choices = spec
    prog = prog.removeprefix("kafkalog ")
    if args.action is not None and args.action not in choices:
        return f"{prog}: unknown action {args.action!r}; choose one of {', '.join(choices)}"
    given = list(dict.fromkeys(([args.action] if args.action else []) + list(args.action_flags or ())))
    if not given:
        return f"{prog} needs an action: {' | '.join(choices)} (or Kafka's --{' | --'.join(choices)})"
    if len(given) > 1:
        return f"{prog} takes one action, not {' and '.join(given)}"
    args.action = given[0]
    return None


def leaf_parser(root: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the subcommand ``args`` names (``kafkalog cluster up``'s, ``kafkalog topics``'), for
    its usage in an error; ``root`` when there is none."""
    parser = root
    for dest in ("command", "action"):
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        name = getattr(args, dest, None)
        if sub is None or name not in sub.choices:
            break
        parser = sub.choices[name]
    return parser


def split_kv(items: Sequence[str]):
    """``key=value`` arguments (``--config``, ``--override``) as stripped (key, value) pairs; anything else exits
    with ``kafkalog: expected key=value, got ...``."""
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"kafkalog: expected key=value, got {item!r}")
        yield key.strip(), value.strip()
