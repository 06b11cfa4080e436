"""``--command-config FILE``: client settings for every tool that takes ``--bootstrap-server`` (Kafka's flag).

The file is a Java ``.properties`` file of client settings under Kafka's (or librdkafka's) names, as given
to Kafka's own tools, typically the security of a secured cluster::

    security.protocol=SASL_SSL
    sasl.mechanism=SCRAM-SHA-512
    sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="...";
    ssl.truststore.location=/etc/kafka/truststore.jks
    ssl.truststore.password=...

``add_options(parser)`` adds the flag to every subcommand parser that has ``--bootstrap-server`` (the
console tools also accept Kafka's ``--producer.config`` / ``--consumer.config`` spellings);
``apply(args)`` reads the file and replaces ``args.bootstrap_server`` by a ``ClientConfig`` holding the
file's settings and ``bootstrap.servers`` (every tool hands ``args.bootstrap_server`` to the client's
constructor, which takes a config as well as a server list), or returns a usage error naming the file
and the setting at fault. The settings never appear in messages (``ClientConfig`` hides its secrets).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from broker.config import ConfigError as BrokerConfigError
from broker.config import parse_properties

__all__ = ["add_options", "apply"]

_ALIASES = {"produce": "--producer.config", "consume": "--consumer.config"}


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--command-config`` to every (sub)parser of ``parser`` that has ``--bootstrap-server``."""
    for sub in _parsers(parser):
        if "--bootstrap-server" not in sub._option_string_actions or "--command-config" in sub._option_string_actions:
            continue
        names = ["--command-config"]
        alias = _ALIASES.get(sub.prog.rsplit(" ", 1)[-1])
        if alias is not None:
            names.append(alias)
        sub.add_argument(
            *names,
            dest="command_config",
            type=Path,
            metavar="FILE",
            default=None,
            help="properties file of client settings (security.protocol, sasl.*, ssl.*, ...), as for Kafka's tools",
        )


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found.extend(_parsers(child))
    return found


def apply(args: argparse.Namespace) -> str | None:
    """Fold ``--command-config`` into ``args.bootstrap_server`` (see the module docstring); a usage error or None."""
    path = getattr(args, "command_config", None)
    if path is None or not isinstance(getattr(args, "bootstrap_server", None), str):
        return None
    from spark_kafkalog.client import ClientConfig
    from spark_kafkalog.client.errors import ConfigError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        return f"cannot read --command-config {path}: {e.strerror or e}"
    try:
        props = parse_properties(text, source=str(path))
    except BrokerConfigError as e:
        return f"--command-config {e}"
    props["bootstrap.servers"] = args.bootstrap_server
    try:
        args.bootstrap_server = ClientConfig.from_kafka_properties(props)
    except ConfigError as e:
        return f"--command-config {path}: {e}"
    return None
