"""``kafkalog acls --add|--remove|--list``: Kafka's ``kafka-acls.sh`` for kafkalog (and any Kafka cluster), over the
wire (CreateAcls, DescribeAcls, DeleteAcls) with ``--bootstrap-server`` and ``--command-config``.

The flags are kafka-acls' (``AclCommand``), with its rules:

- resources: ``--topic T``, ``--group G``, ``--transactional-id I``, ``--delegation-token D``, ``--user-principal
  U`` (each repeatable; ``*`` names every resource of the type) and ``--cluster`` (the one ``kafka-cluster``),
  matched per ``--resource-pattern-type`` (``literal``, the default, or ``prefixed``; ``--list`` and ``--remove``
  also take ``any`` and ``match``);
- entries: ``--allow-principal`` / ``--deny-principal Type:name`` (repeatable), each from ``--allow-host`` /
  ``--deny-host`` (repeatable, ``*`` by default), for each ``--operation`` (repeatable, ``All`` by default; the
  names kafka-acls takes: ``Read``, ``Write``, ``Create``, ``Delete``, ``Alter``, ``Describe``, ``ClusterAction``,
  ``DescribeConfigs``, ``AlterConfigs``, ``IdempotentWrite``, ``CreateTokens``, ``DescribeTokens``, ``All``, in
  any case, ``_`` or ``-`` ignored); an operation a resource type does not support is refused as kafka-acls does
  (``ResourceType GROUP only supports operations All, Read, Delete, Describe``);
- ``--producer``: Write, Describe and Create on each topic, Write and Describe on each transactional id, and with
  ``--idempotent`` IdempotentWrite on the cluster; ``--consumer``: Read and Describe on each topic, Read on each
  group (needs ``--topic`` and ``--group``); neither takes ``--operation`` or deny flags;
- ``--list [--principal P ...]`` prints the ACLs of the resources given (all ACLs without one); ``--add`` creates and
  then lists; ``--remove`` deletes the entries given, or every ACL of each resource filter when no principal is
  given, after asking ``(y/n)`` on the terminal unless ``--force`` (stdin not a terminal and no ``--force``: refused).

One difference: ``--cluster`` with ``--resource-pattern-type any|match`` filters the cluster's ACLs (kafka-acls
drops ``--cluster`` then and lists or removes everything), and ``prefixed`` with ``--cluster`` is refused.

Output is Kafka 3.9's kafka-acls', spaces included (Kafka 4.4 drops the spaces around the entries), with resources
and entries in a stable order where kafka-acls prints a hash order::

    Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
     \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
    \t(principal=User:bob, host=*, operation=WRITE, permissionType=ALLOW)

(each block's first line and its last entry end with a space, and a blank line follows each block). A usage mistake
prints one line ``kafkalog: <what is wrong>`` and exits 2 without connecting; a broker's refusal
(SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED, INVALID_REQUEST) exits 1 with the broker's error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from spark_kafkalog.security.acl import (
    CLUSTER_NAME,
    WILDCARD_HOST,
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
    supported_operations,
)

from .actions import add_action

__all__ = [
    "AclsUsageError",
    "add_parser",
    "check_args",
    "cmd_acls",
    "confirm",
    "format_resource_acls",
    "operation_names",
    "parse_operation",
    "parse_pattern_type",
    "parse_principal",
    "resource_filter_entries",
    "resource_filters",
    "resources_to_add",
]

_O = AclOperation
_PRODUCER_TOPIC_OPS = (_O.WRITE, _O.DESCRIBE, _O.CREATE)
_PRODUCER_TXN_OPS = (_O.WRITE, _O.DESCRIBE)
_CONSUMER_TOPIC_OPS = (_O.READ, _O.DESCRIBE)
_CONSUMER_GROUP_OPS = (_O.READ,)
_CLUSTER_PATTERN = ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
_OPERATION_HELP = ", ".join(o.kafka_name for o in AclOperation if o not in (_O.UNKNOWN, _O.ANY))


class AclsUsageError(Exception):
    """The flags do not make a valid kafka-acls command; the message says what is wrong (kafka-acls' words)."""


def add_parser(sub: Any) -> None:
    pa = sub.add_parser("acls", help="add, remove or list ACLs (kafka-acls)")
    add_action(pa, ("add", "remove", "list"))
    pa.add_argument("--bootstrap-server", required=True)
    res = pa.add_argument_group("resources (each repeatable; '*' names every resource of the type)")
    res.add_argument("--topic", action="append", metavar="T")
    res.add_argument("--group", action="append", metavar="G")
    res.add_argument("--transactional-id", action="append", metavar="I")
    res.add_argument("--delegation-token", action="append", metavar="D")
    res.add_argument("--user-principal", action="append", metavar="U", help="a user resource (CreateTokens ...)")
    res.add_argument("--cluster", action="store_true", help="the cluster (kafka-cluster)")
    res.add_argument(
        "--resource-pattern-type",
        default="literal",
        metavar="TYPE",
        help="literal (default) or prefixed; --list and --remove also any or match",
    )
    ent = pa.add_argument_group("entries")
    ent.add_argument("--allow-principal", action="append", metavar="TYPE:NAME", help="e.g. User:alice (repeatable)")
    ent.add_argument("--deny-principal", action="append", metavar="TYPE:NAME")
    ent.add_argument("--allow-host", action="append", metavar="HOST", help="default * with --allow-principal")
    ent.add_argument("--deny-host", action="append", metavar="HOST", help="default * with --deny-principal")
    ent.add_argument("--operation", action="append", metavar="OP", help=f"default All; one of {_OPERATION_HELP}")
    ent.add_argument("--principal", action="append", metavar="TYPE:NAME", help="--list: only this principal's ACLs")
    conv = pa.add_argument_group("conveniences")
    conv.add_argument("--producer", action="store_true", help="Write, Describe, Create on --topic (and --idempotent)")
    conv.add_argument("--consumer", action="store_true", help="Read, Describe on --topic; Read on --group")
    conv.add_argument("--idempotent", action="store_true", help="with --producer: IdempotentWrite on the cluster")
    conv.add_argument("--force", action="store_true", help="--remove without asking for confirmation")
    pa.set_defaults(func=cmd_acls)


# -- flag parsing ----------------------------------------------------------------------------------
def parse_principal(text: str) -> str:
    """``Type:name`` as Kafka's ``SecurityUtils.parseKafkaPrincipal`` takes it (split at the first ``:``)."""
    text = text.strip()
    kind, sep, name = text.partition(":")
    if not text or not sep:
        raise AclsUsageError(f"expected a string in format principalType:principalName but got {text!r}")
    return f"{kind}:{name}"


def parse_operation(text: str) -> AclOperation:
    """An operation in kafka-acls' spellings (``IdempotentWrite``, ``idempotent_write``, ``READ``)."""
    try:
        op = AclOperation.parse(text)
    except ValueError:
        op = AclOperation.UNKNOWN
    if op is AclOperation.UNKNOWN:
        raise AclsUsageError(f"unknown --operation {text.strip()!r} (valid: {_OPERATION_HELP})")
    return op


def parse_pattern_type(text: str) -> PatternType:
    try:
        kind = PatternType.parse(text)
    except ValueError:
        kind = PatternType.UNKNOWN
    if kind is PatternType.UNKNOWN:
        raise AclsUsageError(f"unknown --resource-pattern-type {text!r} (one of any, match, literal, prefixed)")
    return kind


def operation_names(resource_type: ResourceType) -> str:
    """What kafka-acls lists as valid for ``resource_type``: All and the supported operations, in code order."""
    valid = sorted({*supported_operations(resource_type), _O.ALL})
    return ", ".join(o.kafka_name for o in valid)


def check_args(args: argparse.Namespace) -> None:
    """kafka-acls' ``checkArgs``: flags that do not go together; raises ``AclsUsageError``."""
    action = args.action
    if action == "list":
        for flag in ("producer", "consumer", "allow_host", "allow_principal", "deny_host", "deny_principal"):
            if getattr(args, flag):
                raise AclsUsageError(f'Option "--list" can\'t be used with option "--{flag.replace("_", "-")}"')
    for used in ("producer", "consumer"):
        if not args.__dict__[used]:
            continue
        for flag in ("operation", "deny_principal", "deny_host"):
            if getattr(args, flag):
                raise AclsUsageError(f'Option "--{used}" can\'t be used with option "--{flag.replace("_", "-")}"')
    if args.principal and action != "list":
        raise AclsUsageError("The --principal option is only available if --list is set")
    if args.producer and not args.topic:
        raise AclsUsageError("With --producer you must specify a --topic")
    if args.idempotent and not args.producer:
        raise AclsUsageError("The --idempotent option is only available if --producer is set")
    if args.consumer and (
        not args.topic or not args.group or (not args.producer and (args.cluster or args.transactional_id))
    ):
        raise AclsUsageError(
            "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id "
            "option should be specified."
        )
    pattern_type = parse_pattern_type(args.resource_pattern_type)
    if action == "add" and not pattern_type.is_specific:
        raise AclsUsageError(
            f"A '--resource-pattern-type' value of '{pattern_type.name}' is not valid when adding acls."
        )
    if args.cluster and pattern_type is PatternType.PREFIXED:
        raise AclsUsageError(
            f"--cluster takes --resource-pattern-type literal (the cluster has one name, {CLUSTER_NAME}), not prefixed"
        )


def resource_filters(args: argparse.Namespace, *, required: bool = True) -> list[ResourcePatternFilter]:
    """The resources the flags name, as filters of ``--resource-pattern-type`` (kafka-acls' ``getResourceFilter``);
    ``required``: none is a usage error."""
    pattern_type = parse_pattern_type(args.resource_pattern_type)
    found: list[ResourcePatternFilter] = []

    def add(resource_type: ResourceType, names: Iterable[str] | None, *, trim: bool = True) -> None:
        for name in names or ():
            found.append(ResourcePatternFilter(resource_type, name.strip() if trim else name, pattern_type))

    add(ResourceType.TOPIC, args.topic)
    if args.cluster or args.idempotent:
        if pattern_type is PatternType.LITERAL:
            found.append(_CLUSTER_PATTERN)
        elif args.cluster and not pattern_type.is_specific:
            found.append(ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, pattern_type))
    add(ResourceType.GROUP, args.group)
    add(ResourceType.TRANSACTIONAL_ID, args.transactional_id, trim=False)
    add(ResourceType.DELEGATION_TOKEN, args.delegation_token)
    add(ResourceType.USER, args.user_principal)
    if not found and required:
        raise AclsUsageError(
            "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or "
            "--transactional-id <id> or --delegation-token <Delegation Token ID> or --user-principal <principal>"
        )
    return list(dict.fromkeys(found))


def _entries(args: argparse.Namespace, operations: Iterable[AclOperation]) -> frozenset[AccessControlEntry]:
    """kafka-acls' ``getAcl``: every (principal, host, operation) of the allow flags and of the deny flags; hosts
    default to ``*`` when principals are given."""
    out: set[AccessControlEntry] = set()
    for permission, principals, hosts in (
        (AclPermissionType.ALLOW, args.allow_principal, args.allow_host),
        (AclPermissionType.DENY, args.deny_principal, args.deny_host),
    ):
        names = [parse_principal(p) for p in principals or ()]
        if not names:
            continue
        host_names = [h.strip() for h in hosts] if hosts else [WILDCARD_HOST]
        out.update(
            AccessControlEntry(principal, host, op, permission)
            for principal in names
            for host in host_names
            for op in operations
        )
    return frozenset(out)


def resource_filter_entries(args: argparse.Namespace) -> dict[ResourcePatternFilter, frozenset[AccessControlEntry]]:
    """Each resource filter with the entries the flags give it (kafka-acls' ``getResourceFilterToAcls``): the
    ``--operation``s (All by default) on every resource, or the ``--producer`` / ``--consumer`` sets; an operation
    that a resource type does not support raises ``AclsUsageError``."""
    filters = resource_filters(args)
    out: dict[ResourcePatternFilter, frozenset[AccessControlEntry]] = {}
    if not args.producer and not args.consumer:
        operations = [parse_operation(o) for o in args.operation or ["All"]]
        entries = _entries(args, operations)
        out.update((f, entries) for f in filters)
    if args.producer:
        for f in filters:
            if f.resource_type is ResourceType.TOPIC:
                out[f] = _entries(args, _PRODUCER_TOPIC_OPS)
            elif f.resource_type is ResourceType.TRANSACTIONAL_ID:
                out[f] = _entries(args, _PRODUCER_TXN_OPS)
        if args.idempotent:
            out[_CLUSTER_PATTERN] = _entries(args, (_O.IDEMPOTENT_WRITE,))
    if args.consumer:
        for f in filters:
            if f.resource_type is ResourceType.TOPIC:
                out[f] = out.get(f, frozenset()) | _entries(args, _CONSUMER_TOPIC_OPS)
            elif f.resource_type is ResourceType.GROUP:
                out[f] = out.get(f, frozenset()) | _entries(args, _CONSUMER_GROUP_OPS)
    for f, entries in out.items():
        valid = {*supported_operations(f.resource_type), _O.ALL}
        if any(e.operation not in valid for e in entries):
            raise AclsUsageError(
                f"ResourceType {f.resource_type.name} only supports operations {operation_names(f.resource_type)}"
            )
    return out


def resources_to_add(args: argparse.Namespace) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
    """``--add``'s resources with their entries (kafka-acls' ``getResourceToAcls``)."""
    out = {
        ResourcePattern(f.resource_type, f.name or "", f.pattern_type): entries
        for f, entries in resource_filter_entries(args).items()
    }
    if any(not entries for entries in out.values()):
        raise AclsUsageError("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
    return out


# -- output ----------------------------------------------------------------------------------------
def _block(title: str, entries: Iterable[AccessControlEntry]) -> str:
    lines = "\n".join(f"\t{e}" for e in sorted(entries))
    return f"{title}: \n {lines} \n"


def format_resource_acls(acls: Mapping[ResourcePattern, Iterable[AccessControlEntry]]) -> str:
    """kafka-acls' ``printResourceAcls``: a ``Current ACLs for resource `...`:`` block per resource, then a blank
    line; resources sorted by type, name and pattern type."""
    return "".join(_block(f"Current ACLs for resource `{p}`", acls[p]) + "\n" for p in sorted(acls))


def _by_resource(bindings: Iterable[AclBinding]) -> dict[ResourcePattern, set[AccessControlEntry]]:
    out: dict[ResourcePattern, set[AccessControlEntry]] = {}
    for b in bindings:
        out.setdefault(b.pattern, set()).add(b.entry)
    return out


def confirm(question: str, stdin: TextIO, stdout: TextIO) -> bool:
    """Ask ``question`` and read one line: ``y`` (any case) is yes, anything else (end of input too) no."""
    print(question, file=stdout, flush=True)
    return stdin.readline().strip().lower() == "y"


# -- the command -----------------------------------------------------------------------------------
def _list(admin: Any, args: argparse.Namespace) -> None:
    filters = resource_filters(args, required=False)
    bindings: list[AclBinding] = []
    if not filters:
        bindings = admin.describe_acls(AclBindingFilter())
    for f in filters:
        bindings.extend(admin.describe_acls(AclBindingFilter(f, AccessControlEntryFilter())))
    acls = _by_resource(bindings)
    principals = [parse_principal(p) for p in args.principal or ()]
    if not principals:
        sys.stdout.write(format_resource_acls(acls))
        return
    for principal in dict.fromkeys(principals):
        print(f"ACLs for principal `{principal}`")
        mine = {p: {e for e in entries if e.principal == principal} for p, entries in acls.items()}
        sys.stdout.write(format_resource_acls({p: entries for p, entries in mine.items() if entries}))


def _add(admin: Any, args: argparse.Namespace, to_add: dict[ResourcePattern, frozenset[AccessControlEntry]]) -> None:
    for pattern, entries in to_add.items():
        sys.stdout.write(_block(f"Adding ACLs for resource `{pattern}`", entries) + "\n")
        sys.stdout.flush()
        admin.create_acls(AclBinding(pattern, e) for e in sorted(entries))
    _list(admin, args)


def _remove(
    admin: Any, args: argparse.Namespace, to_remove: dict[ResourcePatternFilter, frozenset[AccessControlEntry]]
) -> None:
    from spark_kafkalog.client.admin.admin_acls import pattern_filter_text

    for f, entries in to_remove.items():
        where = pattern_filter_text(f)
        if not entries:
            question = f"Are you sure you want to delete all ACLs for resource filter `{where}`? (y/n)"
            filters = [AclBindingFilter(f, AccessControlEntryFilter())]
        else:
            question = (
                _block("Are you sure you want to remove ACLs", entries) + f" from resource filter `{where}`? (y/n)"
            )
            filters = [
                AclBindingFilter(f, AccessControlEntryFilter(e.principal, e.host, e.operation, e.permission_type))
                for e in sorted(entries)
            ]
        if args.force or confirm(question, sys.stdin, sys.stdout):
            admin.delete_acls(filters)
    _list(admin, args)


def _error_line(error: Exception) -> str:
    """One line for a failed call: an ``AdminOperationError`` whose items all failed alike (no authorizer, not
    authorized) is said once, with the number of ACLs."""
    errors = getattr(error, "errors", None)
    if errors and len(errors) > 1:
        codes = {e.error_code for e in errors.values()}
        if len(codes) == 1:
            first = next(iter(errors.values()))
            return f"{first} (and {len(errors) - 1} more alike)"
    return str(error)


def cmd_acls(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError

    try:
        check_args(args)
        if args.action == "add":
            to_add = resources_to_add(args)
        elif args.action == "remove":
            to_remove = resource_filter_entries(args)
            if not args.force and not sys.stdin.isatty():
                raise AclsUsageError(
                    "acls --remove asks for confirmation on a terminal, and stdin is not one: add --force to remove "
                    "without asking"
                )
        else:
            resource_filters(args, required=False)
            for p in args.principal or ():
                parse_principal(p)
    except AclsUsageError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 2
    try:
        with AdminClient(args.bootstrap_server) as admin:
            if args.action == "add":
                _add(admin, args, to_add)
            elif args.action == "remove":
                _remove(admin, args, to_remove)
            else:
                _list(admin, args)
        return 0
    except KafkaClientError as e:
        print(f"kafkalog: {_error_line(e)}", file=sys.stderr)
        return 1
