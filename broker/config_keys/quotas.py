"""Client quota keys (read by ``broker.quotas``): the sample windows every quota rate is measured over, as
Kafka's ``quota.window.num`` and ``quota.window.size.seconds``. The quotas themselves are entity configs
(``producer_byte_rate``... of ``users/<u>``, ``clients/<c>``), not broker keys."""

from __future__ import annotations

from .schema import ConfigKey

_K = ConfigKey

QUOTA_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "quota.window.num",
        "int",
        11,
        "Samples a client quota's rate is measured over (the last one is the current, partial window).",
        at_least=1,
    ),
    _K(
        "quota.window.size.seconds",
        "int",
        1,
        "Length of one client quota sample; a Request quota throttle is at most this long.",
        at_least=1,
    ),
)
