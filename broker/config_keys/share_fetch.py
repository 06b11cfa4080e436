"""Share-group keys of the share fetch path (KIP-932; section ``groups``, read by ``broker.share``): share
sessions, acquisition locks, delivery counts and in-flight records of a share partition. Names, defaults and
ranges are Kafka 4.x's (``ShareGroupConfig``)."""

from __future__ import annotations

from .schema import ConfigKey

_K = ConfigKey

SHARE_FETCH_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "group.share.max.share.sessions",
        "int",
        2000,
        "Most share sessions (a share consumer's ShareFetch session, per group and member) a broker holds; a "
        "further one is answered SHARE_SESSION_LIMIT_REACHED.",
        at_least=0,
        section="groups",
    ),
    _K(
        "group.share.record.lock.duration.ms",
        "int",
        30000,
        "How long a share consumer holds the records a ShareFetch acquired for it (the acquisition lock): "
        "records not acknowledged in time become available again. A group's `share.record.lock.duration.ms` "
        "overrides it.",
        at_least=1000,
        at_most=3600000,
        section="groups",
    ),
    _K(
        "group.share.delivery.count.limit",
        "int",
        5,
        "How many times a record of a share group is delivered at most: a release or lock expiry at this count "
        "archives it. A group's `share.delivery.count.limit` overrides it.",
        at_least=2,
        at_most=10,
        section="groups",
    ),
    _K(
        "group.share.partition.max.record.locks",
        "int",
        2000,
        "Most in-flight records (acquired, or delivered and not yet finished) a share partition tracks; "
        "fetching stops there until acknowledgements finish some.",
        at_least=100,
        at_most=10000,
        section="groups",
    ),
)
