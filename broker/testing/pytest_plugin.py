"""kafkalog's pytest plugin: an in-process broker, a cluster of broker processes, topics and fault injection.

Registered as the ``pytest11`` entry point ``kafkalog`` (installing the package enables it; ``-p no:kafkalog``
disables it). Loading it imports neither the broker nor the client: fixtures import them on first use.

Fixtures (docs/testing.md has the guide):

- ``kafkalog_broker`` - an ``EmbeddedBroker`` on 127.0.0.1 port 0 with its own in-memory registry and log dir.
  Scope from ``--kafkalog-broker-scope`` / ini ``kafkalog_broker_scope`` (default ``function``).
- ``kafkalog_cluster`` - an ``EmbeddedCluster``: its own ZooKeeper plus ``kafkalog_cluster_brokers`` (default 3)
  broker processes; topics default to ``min(N, 3)`` replicas. Scope ``kafkalog_cluster_scope`` (default
  ``session``).
- ``bootstrap_servers`` - ``host:port,...`` of the cluster when the test uses ``kafkalog_cluster``, else of
  ``kafkalog_broker``.
- ``kafkalog_topic(partitions=3, replication_factor=None, config=None, name=None) -> str`` - creates a uniquely
  named topic there; deleted at teardown.
- ``kafkalog_produce(topic, records, **producer_settings)`` and ``kafkalog_records(topic, timeout=10.0,
  min_records=None, isolation_level="read_uncommitted")`` - write and read records with kafkalog's client.
- ``kafkalog_schema_registry`` - the URL of a Schema Registry on ``kafkalog_broker`` (Confluent's REST API;
  docs/schema-registry.md), same scope as the broker.
- ``kafkalog_faults`` - ``kafkalog_broker.faults`` (the broker's ``FaultInjector``), cleared at teardown.
- ``kafkalog_resources`` - the session's ``KafkalogResources`` (starts extra brokers and clusters, and lists
  ``leftovers()`` once they are stopped).

Settings: ``--kafkalog-broker-config key=value`` (repeatable) and the ini line list ``kafkalog_broker_config``
apply to every broker (in process and in a cluster); ``@pytest.mark.kafkalog(broker_config={...},
cluster_brokers=N)`` overrides them for one test whose broker or cluster is function scoped.

Isolation: after each test that used a kafkalog fixture, the faults it injected are undone on the shared broker
and cluster (a stopped cluster broker is started again, a broker taken down is brought up); at the end of the
session every broker and cluster is stopped and the session fails if one of their ports still accepts
connections or a child process is still alive. Stop a fixture's broker with ``down()``, never ``stop()``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

import pytest

from .settings import TEST_DEFAULTS, SettingsError, broker_config, parse_broker_count, parse_config_lines, parse_scope

if TYPE_CHECKING:
    from broker.embedded_cluster import EmbeddedCluster
    from broker.faults import FaultInjector
    from broker.server import EmbeddedBroker

    from .records import TopicFactory
    from .resources import KafkalogResources

__all__ = [
    "bootstrap_servers",
    "kafkalog_broker",
    "kafkalog_cluster",
    "kafkalog_faults",
    "kafkalog_produce",
    "kafkalog_records",
    "kafkalog_resources",
    "kafkalog_topic",
]

ScopeName = Literal["session", "package", "module", "class", "function"]
_MARKER = "kafkalog"
_MARKER_KEYS = frozenset({"broker_config", "cluster_brokers"})
_BROKER_USERS = frozenset(
    {
        "kafkalog_broker",
        "bootstrap_servers",
        "kafkalog_topic",
        "kafkalog_produce",
        "kafkalog_records",
        "kafkalog_faults",
    }
)
"""Fixtures that talk to ``kafkalog_broker`` unless the test uses ``kafkalog_cluster``."""
_KAFKALOG_USERS = _BROKER_USERS | {"kafkalog_cluster", "kafkalog_resources"}
"""A test that uses one of these (itself or through its fixtures) may leave faults behind."""
_RESOURCES = pytest.StashKey["KafkalogResources"]()
_LEFTOVERS = pytest.StashKey[list[str]]()


# -- options and ini keys ---------------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafkalog", "kafkalog: embedded Kafka broker and cluster fixtures")
    group.addoption(
        "--kafkalog-broker-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="kafkalog_broker_config",
        help="a broker setting (server.properties name) for every kafkalog test broker; repeatable; "
        "overrides the ini key kafkalog_broker_config",
    )
    group.addoption(
        "--kafkalog-broker-scope",
        default=None,
        dest="kafkalog_broker_scope",
        help="scope of the kafkalog_broker fixture (function, class, module, package, session; default function)",
    )
    group.addoption(
        "--kafkalog-cluster-brokers",
        default=None,
        dest="kafkalog_cluster_brokers",
        help="broker processes of the kafkalog_cluster fixture (default 3)",
    )
    group.addoption(
        "--kafkalog-cluster-scope",
        default=None,
        dest="kafkalog_cluster_scope",
        help="scope of the kafkalog_cluster fixture (default session)",
    )
    parser.addini("kafkalog_broker_config", "broker settings, one key=value per line", type="linelist", default=[])
    parser.addini("kafkalog_broker_scope", "scope of the kafkalog_broker fixture", default="function")
    parser.addini("kafkalog_cluster_brokers", "broker processes of the kafkalog_cluster fixture", default="3")
    parser.addini("kafkalog_cluster_scope", "scope of the kafkalog_cluster fixture", default="session")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafkalog(broker_config=None, cluster_brokers=None): settings of this test's own kafkalog broker or "
        "cluster (the fixture must be function scoped)",
    )
    try:  # a bad setting stops the run before any test, naming the setting
        _broker_config(config)
        _cluster_brokers(config)
        _broker_scope("kafkalog_broker", config)
        _cluster_scope("kafkalog_cluster", config)
    except SettingsError as e:
        raise pytest.UsageError(str(e)) from None


def _broker_config(config: pytest.Config) -> dict[str, str]:
    ini = parse_config_lines(
        cast(list[str], config.getini("kafkalog_broker_config")), source="ini kafkalog_broker_config"
    )
    options = parse_config_lines(config.getoption("kafkalog_broker_config") or [], source="--kafkalog-broker-config")
    return broker_config(TEST_DEFAULTS, ini, options)


def _cluster_brokers(config: pytest.Config) -> int:
    option = config.getoption("kafkalog_cluster_brokers")
    if option is not None:
        return parse_broker_count(option, source="--kafkalog-cluster-brokers")
    return parse_broker_count(config.getini("kafkalog_cluster_brokers"), source="ini kafkalog_cluster_brokers")


def _scope(config: pytest.Config, name: str, default: str) -> ScopeName:
    option = config.getoption(name)
    if option is not None:
        return cast(ScopeName, parse_scope(option, source=f"--{name.replace('_', '-')}", default=default))
    return cast(ScopeName, parse_scope(config.getini(name), source=f"ini {name}", default=default))


def _broker_scope(fixture_name: str, config: pytest.Config) -> ScopeName:
    return _scope(config, "kafkalog_broker_scope", "function")


def _cluster_scope(fixture_name: str, config: pytest.Config) -> ScopeName:
    return _scope(config, "kafkalog_cluster_scope", "session")


def _marker_settings(node: pytest.Item | pytest.Collector) -> dict[str, Any]:
    marker = node.get_closest_marker(_MARKER)
    if marker is None:
        return {}
    if marker.args:
        raise pytest.UsageError(f"{node.nodeid}: @pytest.mark.kafkalog takes keyword arguments only")
    unknown = set(marker.kwargs) - _MARKER_KEYS
    if unknown:
        raise pytest.UsageError(
            f"{node.nodeid}: @pytest.mark.kafkalog does not know {sorted(unknown)} (it takes {sorted(_MARKER_KEYS)})"
        )
    settings = dict(marker.kwargs)
    value = settings.get("broker_config")
    if value is not None and not isinstance(value, Mapping):
        raise pytest.UsageError(
            f"{node.nodeid}: @pytest.mark.kafkalog(broker_config=...) takes a mapping, not {type(value).__name__}"
        )
    return settings


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked with settings for a broker or cluster it shares with other tests errors at setup."""
    settings = _marker_settings(item)
    names = getattr(item, "fixturenames", ())
    uses_broker = "kafkalog_cluster" not in names and not _BROKER_USERS.isdisjoint(names)
    if "broker_config" in settings and uses_broker:
        scope = _broker_scope("kafkalog_broker", item.config)
        if scope != "function":
            pytest.fail(
                f"@pytest.mark.kafkalog(broker_config=...) needs a function-scoped kafkalog_broker, not {scope} "
                "(set kafkalog_broker_scope=function, or start a broker of its own with kafkalog_resources.start_broker)",
                pytrace=False,
            )
    if settings and "kafkalog_cluster" in names:
        scope = _cluster_scope("kafkalog_cluster", item.config)
        if scope != "function":
            pytest.fail(
                f"@pytest.mark.kafkalog(...) needs a function-scoped kafkalog_cluster, not {scope} "
                "(set kafkalog_cluster_scope=function, or start a cluster of its own with "
                "kafkalog_resources.start_cluster)",
                pytrace=False,
            )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop what is still running, then fail the session when a port or child process outlived it."""
    resources = session.config.stash.get(_RESOURCES, None)
    if resources is None:
        return
    resources.stop_all()
    leftovers = resources.leftovers()
    session.config.stash[_LEFTOVERS] = leftovers
    if leftovers:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    leftovers = config.stash.get(_LEFTOVERS, [])
    if leftovers:
        terminalreporter.write_sep("=", "kafkalog", red=True)
        terminalreporter.write_line("kafkalog: left behind after the session: " + "; ".join(leftovers), red=True)


# -- fixtures ---------------------------------------------------------------------------------------
def _resources(config: pytest.Config) -> KafkalogResources:
    resources = config.stash.get(_RESOURCES, None)
    if resources is None:
        from .resources import KafkalogResources

        resources = KafkalogResources(_broker_config(config), _cluster_brokers(config))
        config.stash[_RESOURCES] = resources
    return resources


@pytest.fixture(scope="session")
def kafkalog_resources(pytestconfig: pytest.Config) -> Generator[KafkalogResources, None, None]:
    """The session's factory of brokers and clusters (``KafkalogResources``); stops them all at the end."""
    resources = _resources(pytestconfig)
    yield resources
    resources.stop_all()


def _own_settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _marker_settings(request.node) if request.scope == "function" else {}


@pytest.fixture(scope=_broker_scope)
def kafkalog_broker(
    request: pytest.FixtureRequest, kafkalog_resources: KafkalogResources
) -> Generator[EmbeddedBroker, None, None]:
    """An in-process ``EmbeddedBroker`` (port 0, its own registry and log dir), stopped at the scope's end."""
    overrides = broker_config(_own_settings(request).get("broker_config"))
    broker = kafkalog_resources.start_broker(overrides)
    yield broker
    kafkalog_resources.stop_broker(broker)


@pytest.fixture(scope=_broker_scope)
def kafkalog_schema_registry(kafkalog_broker: EmbeddedBroker) -> str:
    """The URL of a Schema Registry served by ``kafkalog_broker`` (started on 127.0.0.1 port 0 on first use,
    ready - its topic created and read - when the fixture returns; stopped with the broker)."""
    return kafkalog_broker.start_schema_registry()


@pytest.fixture(scope=_cluster_scope)
def kafkalog_cluster(
    request: pytest.FixtureRequest, kafkalog_resources: KafkalogResources
) -> Generator[EmbeddedCluster, None, None]:
    """An ``EmbeddedCluster`` (ZooKeeper plus N broker processes), stopped at the scope's end."""
    settings = _own_settings(request)
    brokers = settings.get("cluster_brokers")
    cluster = kafkalog_resources.start_cluster(
        None if brokers is None else parse_broker_count(brokers, source="@pytest.mark.kafkalog(cluster_brokers)"),
        broker_config(settings.get("broker_config")),
    )
    yield cluster
    kafkalog_resources.stop_cluster(cluster)


class _Target:
    """The broker or cluster a test talks to: the cluster when the test uses ``kafkalog_cluster``."""

    def __init__(self, request: pytest.FixtureRequest):
        self.cluster: EmbeddedCluster | None = None
        self.broker: EmbeddedBroker | None = None
        if "kafkalog_cluster" in request.fixturenames:
            self.cluster = request.getfixturevalue("kafkalog_cluster")
        else:
            self.broker = request.getfixturevalue("kafkalog_broker")

    @property
    def bootstrap_servers(self) -> str:
        return self.cluster.bootstrap_servers if self.cluster is not None else self._broker.bootstrap_servers

    @property
    def _broker(self) -> EmbeddedBroker:
        assert self.broker is not None
        return self.broker

    @property
    def client_config(self) -> dict[str, str]:
        return dict(self.cluster.client_config) if self.cluster is not None else {}


@pytest.fixture
def bootstrap_servers(request: pytest.FixtureRequest) -> str:
    """``host:port,...`` of the test's cluster (when it uses ``kafkalog_cluster``), else of ``kafkalog_broker``."""
    return _Target(request).bootstrap_servers


@pytest.fixture
def kafkalog_topic(request: pytest.FixtureRequest) -> Generator[TopicFactory, None, None]:
    """``kafkalog_topic(partitions=3, replication_factor=None, config=None, name=None) -> str``: a new topic on
    the test's broker or cluster; the topics are deleted at teardown (after the test's faults are undone)."""
    from .records import TopicFactory

    target = _Target(request)
    factory = TopicFactory(lambda: target.bootstrap_servers, hint=request.node.name, client_config=target.client_config)
    yield factory
    if factory.created:
        _restore([target.cluster or target.broker], request.config.stash.get(_RESOURCES, None))
        factory.cleanup()


@pytest.fixture
def kafkalog_produce(request: pytest.FixtureRequest) -> Callable[..., list[Any]]:
    """``kafkalog_produce(topic, records, *, partition=None, **producer_settings) -> [RecordMetadata]``: send
    values, ``(key, value)`` pairs or mappings with kafkalog's ``Producer`` and wait for their acknowledgements."""
    from .records import produce_records

    target = _Target(request)

    def produce(topic: str, records: Iterable[Any], **kwargs: Any) -> list[Any]:
        return produce_records(target.bootstrap_servers, topic, records, client_config=target.client_config, **kwargs)

    return produce


@pytest.fixture
def kafkalog_records(request: pytest.FixtureRequest) -> Callable[..., list[Any]]:
    """``kafkalog_records(topic, *, timeout=10.0, min_records=None, isolation_level="read_uncommitted")
    -> [ConsumerRecord]``: every record of the topic (by partition, offset) read with kafkalog's ``Consumer``."""
    from .records import read_records

    target = _Target(request)

    def records(topic: str, **kwargs: Any) -> list[Any]:
        return read_records(target.bootstrap_servers, topic, client_config=target.client_config, **kwargs)

    return records


@pytest.fixture
def kafkalog_faults(kafkalog_broker: EmbeddedBroker) -> Generator[FaultInjector, None, None]:
    """``kafkalog_broker.faults``: the broker's ``FaultInjector`` (docs/fault-injection.md); every injection is
    undone at teardown."""
    faults = kafkalog_broker.faults
    yield faults
    faults.clear()


@pytest.fixture(autouse=True)
def _kafkalog_isolation(request: pytest.FixtureRequest) -> Generator[None, None, None]:
    """After each test, undo the faults left on the brokers and clusters that outlive it (shared ones; a
    function-scoped broker or cluster is stopped by then). Nothing is imported when no broker ran."""
    yield
    resources = request.config.stash.get(_RESOURCES, None)
    if resources is not None and resources.running and not _KAFKALOG_USERS.isdisjoint(request.fixturenames):
        _restore(resources.running, resources)


def _restore(targets: Iterable[Any], resources: KafkalogResources | None) -> None:
    from broker.server import EmbeddedBroker

    from .isolation import restore_broker, restore_cluster

    for target in targets:
        if isinstance(target, EmbeddedBroker):
            restore_broker(target)
        else:
            restore_cluster(target)
            if resources is not None:
                resources.note_cluster_processes(target)
