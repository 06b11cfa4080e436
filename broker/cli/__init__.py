"""The ``kafkalog`` operator command: ``main`` is the console script (``kafkalog = "broker.cli:main"``),
also run as ``python -m broker.cli``; ``build_parser`` returns its argument parser.

``app`` holds the entry point, the parser, the exit codes and the ``zookeeper``, ``broker`` and ``cluster``
commands; one module per console tool: ``topics`` (kafka-topics), ``produce`` (kafka-console-producer),
``consume`` (kafka-console-consumer), ``offsets`` (kafka-get-offsets), ``dump_log`` (kafka-dump-log), ``groups``
(kafka-consumer-groups), ``configs`` (kafka-configs), ``partitions`` (kafka-reassign-partitions),
``transactions`` (kafka-transactions), ``status`` (one screen of cluster health); ``cluster`` holds
``cluster up``'s ports and pids files, its broker watch, restart requests and ``cluster stop``; ``actions``
the word-or-flag actions (``topics create`` or ``--create``) and ``KEY=VALUE`` arguments; ``output`` the
closed-stdout handling.
"""

from broker.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
