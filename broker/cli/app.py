"""``kafkalog``: the console entry point.

    kafkalog zookeeper start [--data-dir D] [--port P]
    kafkalog broker start --config server.properties [--override key=value ...]
    kafkalog cluster up --brokers N --data-dir DIR [--base-port P] [--zookeeper-port P] [--restart-failed] [--metrics]
                        [--security] [--fault-injection] [--no-schema-registry]
    kafkalog cluster restart-broker --data-dir DIR --broker N
    kafkalog cluster stop --data-dir DIR
    kafkalog topics create|list|describe|delete|alter --bootstrap-server HOST:PORT ... [--if-not-exists]
                     (or Kafka's --create, --list, --describe, --delete, --alter)
    kafkalog produce --bootstrap-server HOST:PORT --topic T [--property parse.key=true --property key.separator=:]
                     [--property parse.headers=true ...] [--key-separator S] [--acks A] [--compression-codec C]
    kafkalog consume --bootstrap-server HOST:PORT --topic T [--from-beginning] [--partition P [--offset O]]
                     [--group G] [--max-messages N] [--timeout-ms MS] [--property K=V ... | --format F]
    kafkalog offsets --bootstrap-server HOST:PORT [--topic T [--partitions 0,1]] [--time -1|-2|-3|MS]
    kafkalog dump-log --files F.log[,F.index,...] [--print-data-log] [--deep-iteration]
    kafkalog groups list|describe|reset-offsets|delete --bootstrap-server HOST:PORT ... (or --list, --describe, ...)
    kafkalog configs describe|alter --bootstrap-server HOST:PORT ... (or --describe, --alter)
    kafkalog acls --add|--remove|--list --bootstrap-server HOST:PORT [--topic T | --group G | --cluster ...]
                     [--allow-principal User:U --operation Read ... | --producer | --consumer] (kafka-acls' flags)
    kafkalog partitions reassign --bootstrap-server HOST:PORT (--topic T --partition P --replicas 2,3,1 |
                     --reassignment-json-file F --execute|--verify|--cancel | --list |
                     --generate --topics-to-move-json-file F --broker-list 1,2,3)
    kafkalog leader-election --bootstrap-server HOST:PORT --election-type PREFERRED|UNCLEAN (--topic T --partition P |
                     --all-topic-partitions | --path-to-json-file F)   (kafka-leader-election's flags)
    kafkalog status --bootstrap-server HOST:PORT [--watch [SECONDS]] [--include-internal]
    kafkalog --version

Exit codes: 0 success, 1 failure (the message says why), 2 bad usage, 130 interrupted.
Progress and status go to stderr; data (consumed records, ``bootstrap.servers=...``) to stdout. A stdout
closed early (``kafkalog configs describe --all | head``) stops a command with one line
``kafkalog: output stopped: stdout was closed (broken pipe)`` (exit 1); a server goes on serving.
A mistake (bad usage, an unreadable configuration, a data dir that is a file or in use, an address where
nothing listens) is reported as one line ``kafkalog: <what is wrong>`` on stderr, without a traceback;
a traceback means a bug. ``cluster up`` and ``zookeeper start`` hold an exclusive lock on ``<data dir>/.lock``
while they run, so a second one on the same directory refuses at once and touches nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import broker.cli.acls as cli_acls
import broker.cli.actions as cli_actions
import broker.cli.cluster as cli_cluster
import broker.cli.command_config as cli_command_config
import broker.cli.configs as cli_configs
import broker.cli.consume as cli_consume
import broker.cli.dump_log as cli_dump_log
import broker.cli.groups as cli_groups
import broker.cli.leader_election as cli_leader_election
import broker.cli.offsets as cli_offsets
import broker.cli.output as cli_output
import broker.cli.partitions as cli_partitions
import broker.cli.produce as cli_produce
import broker.cli.status as cli_status
import broker.cli.topics as cli_topics
import broker.cli.transactions as cli_transactions
from broker.cli.topics import cmd_topics as cmd_topics  # re-exported: `kafkalog topics` moved to topics.py
from broker.cli.topics import partition_listed as partition_listed

MAX_PORT = 65535


def _log_setup(level: str = "INFO") -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("kazoo").setLevel(logging.WARNING)


def _err(msg: str) -> int:
    print(f"kafkalog: {msg}", file=sys.stderr)
    return 1


class CommandError(Exception):
    """A user mistake found before acting; ``main`` prints its message as one line and exits 1."""


def _check_dir(path: Path, what: str) -> None:
    """Raise ``CommandError`` when ``path`` cannot be a directory (it, or a parent, is not one)."""
    for candidate in (path, *path.parents):
        if not candidate.exists():
            continue
        if candidate.is_dir():
            return
        kind = "a regular file" if candidate.is_file() else "not a directory"
        if candidate == path:
            raise CommandError(f"{what} {path} is {kind}, not a directory")
        raise CommandError(f"{what} {path} cannot be created: {candidate} is {kind}")


def _lock_dir(path: Path, what: str) -> int:
    """Create ``path`` and hold an exclusive lock on ``path/.lock`` until this process exits (the file
    holds the owner's pid, for the message of whoever finds it locked); returns the lock's descriptor."""
    _check_dir(path, what)
    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        raise CommandError(
            f"{what} {path} is in use by another kafkalog process"
            + (f" (pid {holder})" if holder.isdigit() else "")
            + "; stop it first or choose another directory"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _zookeeper_hosts(connect: str) -> list[tuple[str, int]]:
    """``[(host, port)]`` of a ``zookeeper.connect`` string ``h1:p1,h2:p2/chroot`` (port 2181 by default)."""
    hosts = []
    for item in connect.split("/", 1)[0].split(","):
        host, sep, port = item.strip().rpartition(":")
        if not sep:
            host, port = item.strip(), "2181"
        hosts.append((host.strip("[]"), int(port) if port.isdigit() else 2181))
    return hosts


def _check_zookeeper_listens(connect: str) -> None:
    """Raise ``CommandError`` when every ZooKeeper host keeps refusing TCP connections (nothing listens,
    unknown host) for the client's bootstrap give-up time; a host that accepts or is slow to answer passes
    (the broker's own ``zookeeper.connection.timeout.ms`` then applies)."""
    from spark_kafkalog.client.network import pool

    hosts = _zookeeper_hosts(connect)
    deadline = time.monotonic() + pool.BOOTSTRAP_REFUSED_GIVE_UP_S
    while True:
        reasons = []
        for host, port in hosts:
            if not 1 <= port <= MAX_PORT:
                raise CommandError(f"zookeeper.connect ({connect}): port {port} is not in 1-{MAX_PORT}")
            try:
                with socket.create_connection((host, port), timeout=2.0):
                    return
            except TimeoutError:
                return
            except ConnectionRefusedError:
                reasons.append(f"{host}:{port} (connection refused)")
            except socket.gaierror as e:
                reasons.append(f"{host}:{port} (unknown host: {e.strerror})")
            except OSError as e:
                reasons.append(f"{host}:{port} ({(e.strerror or str(e)).lower()})")
        if time.monotonic() >= deadline:
            raise CommandError(
                f"cannot connect to ZooKeeper at {', '.join(reasons)}: is it running, and is "
                f"zookeeper.connect ({connect}) right?"
            )
        time.sleep(0.25)


# -- zookeeper ---------------------------------------------------------------------------------------
def cmd_zookeeper_start(args: argparse.Namespace) -> int:
    from ..cluster.zookeeper_server import JavaNotFoundError, ZooKeeperError, run_foreground

    _lock_dir(Path(args.data_dir), "ZooKeeper data dir")
    try:
        return run_foreground(args.data_dir, args.port)
    except (JavaNotFoundError, ZooKeeperError) as e:
        return _err(str(e))


# -- broker ------------------------------------------------------------------------------------------
def cmd_broker_start(args: argparse.Namespace) -> int:
    from ..cluster.registry_factory import MEMORY_PREFIX
    from ..config import BrokerConfig, ConfigError
    from ..server import Broker

    try:
        config = BrokerConfig.from_file(args.config, args.override or ())
    except UnicodeDecodeError as e:
        return _err(
            f"bad configuration: {args.config} is not a UTF-8 text file "
            f"(byte 0x{e.object[e.start]:02x} at offset {e.start})"
        )
    except (ConfigError, OSError) as e:
        return _err(f"bad configuration: {e}")
    for log_dir in config.log_dirs:
        _check_dir(Path(log_dir), "log dir (log.dirs)")
    if not config.zookeeper_connect.startswith(MEMORY_PREFIX):
        _check_zookeeper_listens(config.zookeeper_connect)
    _log_setup(args.log_level)
    log = logging.getLogger("kafkalog.broker")
    for key in config.unknown_keys:
        log.warning("configuration key %s is not used by kafkalog", key)

    async def main() -> int:
        broker = Broker(config)
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await broker.start()
        except Exception as e:
            if not isinstance(e, _expected_start_errors()):
                log.exception("start-up failed")  # a bug: keep the traceback
            print(f"kafkalog: broker {config.broker_id} failed to start: {e}", file=sys.stderr)
            return 1
        cli_output.announce(f"kafkalog broker {config.broker_id} serving on {','.join(broker.endpoints())}")
        await stop.wait()
        log.info("shutting down")
        await broker.stop()
        return 0

    from ..event_loop import new_event_loop

    loop = new_event_loop(config["event.loop"])
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()


def _expected_start_errors() -> tuple[type[BaseException], ...]:
    """Start-up failures that are conditions to report in one line (no traceback): the data dir, the
    registry (ZooKeeper unreachable, duplicate broker.id), the configuration, the network."""
    from ..cluster.registry import RegistryError
    from ..config import ConfigError
    from ..log.errors import LogError

    return OSError, RuntimeError, RegistryError, LogError, ConfigError


# -- cluster -----------------------------------------------------------------------------------------
def cmd_cluster_up(args: argparse.Namespace) -> int:
    from ..embedded_cluster import ClusterStartError, EmbeddedCluster

    if args.zookeeper_connect is not None:
        _check_zookeeper_listens(args.zookeeper_connect)
    _lock_dir(args.data_dir, "cluster data dir")
    if args.zookeeper_connect is None:
        _lock_dir(args.data_dir / "zookeeper", "ZooKeeper data dir")
    try:
        zk_port, broker_ports = cli_cluster.choose_ports(
            args.data_dir,
            args.brokers,
            "127.0.0.1",
            args.base_port,
            args.zookeeper_port,
            own_zookeeper=args.zookeeper_connect is None,
        )
        metrics_ports = (
            cli_cluster.choose_metrics_ports(
                args.data_dir, args.brokers, "127.0.0.1", {*broker_ports.values(), *([zk_port] if zk_port else [])}
            )
            if args.metrics
            else {}
        )
        registry_ports = (
            cli_cluster.choose_schema_registry_ports(
                args.data_dir,
                args.brokers,
                "127.0.0.1",
                {*broker_ports.values(), *metrics_ports.values(), *([zk_port] if zk_port else [])},
            )
            if args.schema_registry
            else {}
        )
    except cli_cluster.PortError as e:
        return _err(str(e))
    # topics created without a replication factor get min(3, brokers) replicas, as a production cluster would
    overrides = {
        "default.replication.factor": str(min(3, args.brokers)),
        **dict(cli_actions.split_kv(args.override or ())),
    }
    security = None
    if args.security:
        from ..security.local_cluster import LocalClusterSecurity

        security = LocalClusterSecurity.prepare(args.data_dir)
        overrides = {**security.broker_config(), **overrides}
    cluster = EmbeddedCluster(
        args.brokers,
        data_dir=args.data_dir,
        broker_ports=broker_ports,
        zookeeper_port=zk_port or 0,
        zookeeper_connect=args.zookeeper_connect,
        broker_config=overrides,
        metrics=args.metrics,
        metrics_ports=metrics_ports,
        client_config=security.client_config() if security else None,
        before_brokers=_write_admin_credentials(security) if security else None,
        fault_injection=args.fault_injection,
        schema_registry=args.schema_registry,
        schema_registry_ports=registry_ports,
    )
    started = time.monotonic()

    def say(msg: str) -> None:
        print(f"[{time.monotonic() - started:5.1f}s] {msg}", file=sys.stderr, flush=True)

    try:
        cluster.start(progress=say)
    except (ClusterStartError, OSError, RuntimeError) as e:
        return _err(str(e))
    if security is not None:
        for line in security.summary(cluster.bootstrap_servers):
            say(line)
        if args.schema_registry:
            say("Schema Registry: HTTP basic auth with the SCRAM users (basic.auth.user.info=admin:<admin.password>)")
    if args.fault_injection:
        ports = ", ".join(f"broker {b}: 127.0.0.1:{p}" for b, p in sorted(cluster.fault_ports.items()))
        say(f"fault-injection control channels (docs/fault-injection.md): {ports}")
    zk = cluster.zookeeper.port if cluster.zookeeper is not None else None
    return cli_cluster.serve(cluster, args.restart_failed, say, zk)


def _write_admin_credentials(security: Any) -> Callable[[str], None]:
    """``cluster up --security``: the SCRAM admin (the inter-broker identity) in ZooKeeper before the brokers start."""

    def write(zookeeper_connect: str) -> None:
        from ..cluster.zk_registry import ZooKeeperRegistry

        registry = ZooKeeperRegistry(zookeeper_connect)
        try:
            registry.start(30)
            security.write_admin_credentials(registry)
        finally:
            registry.close()

    return write


def cmd_cluster_stop(args: argparse.Namespace) -> int:
    try:
        lines = cli_cluster.stop_cluster(args.data_dir)
    except RuntimeError as e:
        return _err(str(e))
    print("\n".join(lines))
    return 0


def cmd_cluster_restart_broker(args: argparse.Namespace) -> int:
    try:
        print(cli_cluster.request_restart(args.data_dir, args.broker))
    except RuntimeError as e:
        return _err(str(e))
    return 0


# -- parser ------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    from spark_kafkalog import __version__

    p = argparse.ArgumentParser(prog="kafkalog", description="kafkalog: a Kafka-compatible broker and tools")
    p.add_argument("--version", action="version", version=f"kafkalog {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    zk = sub.add_parser("zookeeper", help="run a ZooKeeper server (from the jars in pyspark)")
    zk_sub = zk.add_subparsers(dest="action", required=True)
    zks = zk_sub.add_parser("start", help="run ZooKeeper in the foreground until SIGINT/SIGTERM")
    zks.add_argument("--data-dir", default="./zookeeper-data")
    zks.add_argument("--port", type=int, default=2181)
    zks.set_defaults(func=cmd_zookeeper_start)

    br = sub.add_parser("broker", help="run a broker")
    br_sub = br.add_subparsers(dest="action", required=True)
    brs = br_sub.add_parser("start", help="run one broker in the foreground until SIGINT/SIGTERM")
    brs.add_argument("--config", required=True, type=Path, help="server.properties file")
    brs.add_argument("--override", action="append", metavar="KEY=VALUE", help="override a property (repeatable)")
    brs.add_argument("--log-level", default="INFO")
    brs.set_defaults(func=cmd_broker_start)

    cl = sub.add_parser("cluster", help="run ZooKeeper plus N brokers")
    cl_sub = cl.add_subparsers(dest="action", required=True)
    clu = cl_sub.add_parser("up", help="start a cluster and keep it up until SIGINT/SIGTERM")
    clu.add_argument("--brokers", type=int, default=3)
    clu.add_argument("--data-dir", required=True, type=Path)
    clu.add_argument(
        "--base-port",
        type=int,
        default=None,
        help="broker i listens on base-port + i - 1 (default: the ports recorded in the data dir, else 9092..)",
    )
    clu.add_argument("--zookeeper-port", type=int, default=None, help="default: the recorded port, else 2181 when free")
    clu.add_argument("--restart-failed", action="store_true", help="start a broker that died again")
    clu.add_argument(
        "--metrics",
        action="store_true",
        help="serve each broker's Prometheus metrics (a free port each, recorded in ports.properties)",
    )
    clu.add_argument("--zookeeper-connect", default=None, help="use this ZooKeeper instead of starting one")
    clu.add_argument(
        "--fault-injection",
        action="store_true",
        help="open each broker's fault-injection control channel on a loopback port (tests only: anyone on the "
        "host can inject faults through it; docs/fault-injection.md)",
    )
    clu.add_argument(
        "--schema-registry",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="each broker serves Confluent Schema Registry's REST API (port 8081 + id - 1 when free, recorded in "
        "ports.properties; schema.registry.url printed; with --security, basic auth with the SCRAM users)",
    )
    clu.add_argument(
        "--security",
        action="store_true",
        help="SASL_SSL with SCRAM: a local CA and broker certificates, an admin user, the client settings printed "
        "(files under <data dir>/security, reused by later runs)",
    )
    clu.add_argument(
        "--override",
        action="append",
        metavar="KEY=VALUE",
        help="broker property (repeatable); default.replication.factor defaults to min(3, brokers)",
    )
    clu.set_defaults(func=cmd_cluster_up)
    clr = cl_sub.add_parser("restart-broker", help="ask the running `cluster up` on a data dir to restart a broker")
    clr.add_argument("--data-dir", required=True, type=Path)
    clr.add_argument("--broker", required=True, type=int)
    clr.set_defaults(func=cmd_cluster_restart_broker)
    cls = cl_sub.add_parser("stop", help="stop the `cluster up` running on a data dir (brokers, then ZooKeeper)")
    cls.add_argument("--data-dir", required=True, type=Path)
    cls.set_defaults(func=cmd_cluster_stop)

    cli_topics.add_parser(sub)
    cli_produce.add_parser(sub)

    cli_consume.add_parser(sub)
    cli_offsets.add_parser(sub)
    cli_dump_log.add_parser(sub)
    cli_groups.add_parser(sub)
    cli_partitions.add_parser(sub)
    cli_leader_election.add_parser(sub)
    cli_configs.add_parser(sub)
    cli_acls.add_parser(sub)
    cli_status.add_parser(sub)
    cli_transactions.add_parser(sub)
    cli_command_config.add_options(p)  # --command-config beside every --bootstrap-server
    return p


def _usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with arguments that argparse accepted, or ``None``."""
    if args.command == "topics":
        return cli_topics.usage_error(args)
    if args.command == "groups":
        return cli_groups.usage_error(args)
    if args.command == "partitions":
        return cli_partitions.usage_error(args)
    if args.command == "leader-election":
        return cli_leader_election.usage_error(args)
    if args.command == "cluster" and args.action == "up":
        if args.brokers < 1:
            return f"cluster up needs --brokers 1 or more, not {args.brokers}"
        highest = MAX_PORT - args.brokers + 1
        if args.base_port is not None and not 1 <= args.base_port <= highest:
            return (
                f"cluster up --base-port must be in 1-{highest} (broker i listens on base-port + i - 1, "
                f"ports end at {MAX_PORT}), not {args.base_port}"
            )
        if args.zookeeper_port is not None and not 0 <= args.zookeeper_port <= MAX_PORT:
            return f"cluster up --zookeeper-port must be in 0-{MAX_PORT} (0: a free port), not {args.zookeeper_port}"
    if args.command == "zookeeper" and not 0 <= args.port <= MAX_PORT:
        return f"zookeeper start --port must be in 0-{MAX_PORT} (0: a free port), not {args.port}"
    if args.command == "cluster" and args.action == "restart-broker" and args.broker < 1:
        return f"cluster restart-broker needs a broker id of 1 or more, not {args.broker}"
    if args.command == "consume":
        return cli_consume.usage_error(args)
    if args.command == "produce":
        return cli_produce.usage_error(args)
    if args.command == "offsets":
        return cli_offsets.usage_error(args)
    if args.command == "dump-log":
        return cli_dump_log.usage_error(args)
    if args.command == "transactions":
        return cli_transactions.usage_error(args)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # what is still buffered fails here, not in the interpreter's exit
    except BrokenPipeError:
        if not cli_output.stdout_is_closed_pipe():
            raise  # not our stdout (a bug elsewhere): keep the traceback
        return cli_output.stdout_closed()


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the subcommand's usage, not the top-level one (argparse's default)
        cli_actions.leaf_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    problem = cli_actions.resolve(args) or _usage_error(args) or cli_command_config.apply(args)
    if problem is not None:
        print(f"kafkalog: {problem}", file=sys.stderr)
        return 2
    if args.command in ("topics", "produce", "consume", "groups", "partitions", "offsets", "leader-election"):
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="kafkalog: warning: %(message)s")
    try:
        return args.func(args)
    except CommandError as e:
        return _err(str(e))
    except KeyboardInterrupt:
        return 130
