"""Share-group membership keys and the bounds of group configs (KIP-932; section ``groups``): whether share
groups are served, their members' session timeout and heartbeat interval, the group size, and the ranges a
group's own configs (``broker.config_admin.group_configs``: ``share.record.lock.duration.ms``,
``share.delivery.count.limit``, ``share.session.timeout.ms``, ``share.heartbeat.interval.ms``) must stay in.
Names, defaults and ranges are Kafka 4.x's (``GroupCoordinatorConfig``, ``ShareGroupConfig``); the share fetch
path's keys are ``share_fetch``'s."""

from __future__ import annotations

from .schema import ConfigKey

_K = ConfigKey

SHARE_GROUP_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "group.share.enable",
        "boolean",
        True,
        "Whether share groups (KIP-932) are served: without them ShareGroupHeartbeat, ShareGroupDescribe, "
        "ShareFetch and ShareAcknowledge answer UNSUPPORTED_VERSION and ApiVersions does not offer them.",
        section="groups",
    ),
    _K(
        "group.share.session.timeout.ms",
        "int",
        45000,
        "A share group member that sends no ShareGroupHeartbeat for this long is removed from its group (its "
        "partitions are reassigned, the records it acquired released). A group's `share.session.timeout.ms` "
        "overrides it.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.share.min.session.timeout.ms",
        "int",
        45000,
        "The smallest `share.session.timeout.ms` a group config may set.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.share.max.session.timeout.ms",
        "int",
        60000,
        "The largest `share.session.timeout.ms` a group config may set.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.share.heartbeat.interval.ms",
        "int",
        5000,
        "How often share group members heartbeat (sent to them in every ShareGroupHeartbeat answer). A group's "
        "`share.heartbeat.interval.ms` overrides it.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.share.min.heartbeat.interval.ms",
        "int",
        5000,
        "The smallest `share.heartbeat.interval.ms` a group config may set.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.share.max.heartbeat.interval.ms",
        "int",
        15000,
        "The largest `share.heartbeat.interval.ms` a group config may set.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.share.max.size",
        "int",
        200,
        "Most members a share group may have; a further member is answered GROUP_MAX_SIZE_REACHED.",
        at_least=1,
        at_most=1000,
        section="groups",
    ),
    _K(
        "group.share.min.record.lock.duration.ms",
        "int",
        15000,
        "The smallest `share.record.lock.duration.ms` a group config may set.",
        at_least=1000,
        at_most=30000,
        section="groups",
    ),
    _K(
        "group.share.max.record.lock.duration.ms",
        "int",
        60000,
        "The largest `share.record.lock.duration.ms` a group config may set.",
        at_least=30000,
        at_most=3600000,
        section="groups",
    ),
    _K(
        "group.share.min.delivery.count.limit",
        "int",
        2,
        "The smallest `share.delivery.count.limit` a group config may set.",
        at_least=2,
        at_most=5,
        section="groups",
    ),
    _K(
        "group.share.max.delivery.count.limit",
        "int",
        10,
        "The largest `share.delivery.count.limit` a group config may set.",
        at_least=5,
        at_most=25,
        section="groups",
    ),
)
