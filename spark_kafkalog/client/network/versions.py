"""API version negotiation: intersect what the broker advertises with what this client can encode.

Our range for an API is the range our protocol declarations cover (``API_BY_KEY``). A request is sent at
the highest version in ``ours ∩ broker's ∩ [request minimum, request maximum]``; the request minimum
expresses a feature the call needs (timestamps in ListOffsets need v1, ``read_committed`` Fetch needs v4,
RecordBatch v2 Produce needs v3). An empty intersection is a ``NoCommonVersionError``: a version the
broker does not advertise is never sent. Immutable once built; thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from spark_kafkalog.client.errors import NoCommonVersionError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, VersionRange

__all__ = ["CLIENT_VERSIONS", "ApiVersionTable"]

CLIENT_VERSIONS: dict[int, VersionRange] = {key: spec.versions for key, spec in API_BY_KEY.items()}
"""Versions this client can encode and decode, per API key."""


def api_name(api_key: int) -> str:
    spec = API_BY_KEY.get(api_key)
    if spec is not None:
        return spec.name
    try:
        return ApiKey(api_key).name
    except ValueError:
        return f"API {api_key}"


class ApiVersionTable:
    """The negotiated versions of one broker connection, and the feature levels the broker finalized
    (``finalized_features``: name -> max level, from an ApiVersions v3+ response; ``features_epoch`` -1 when the
    broker sent none)."""

    __slots__ = ("broker_ranges", "usable", "peer", "finalized_features", "features_epoch")

    def __init__(
        self,
        broker_ranges: Mapping[int, tuple[int, int]],
        *,
        client_ranges: Mapping[int, VersionRange] = CLIENT_VERSIONS,
        peer: str = "?",
    ) -> None:
        self.peer = peer
        self.finalized_features: dict[str, int] = {}
        self.features_epoch = -1
        self.broker_ranges = {k: VersionRange(lo, hi) for k, (lo, hi) in broker_ranges.items()}
        self.usable: dict[int, VersionRange] = {}
        for key, theirs in self.broker_ranges.items():
            ours = client_ranges.get(key)
            common = ours.intersect(theirs) if ours is not None else None
            if common is not None:
                self.usable[key] = common

    @classmethod
    def from_api_keys(cls, api_keys: Iterable, **kwargs) -> ApiVersionTable:
        """From the ``api_keys`` array of an ApiVersions response."""
        return cls({k.api_key: (k.min_version, k.max_version) for k in api_keys}, **kwargs)

    def feature_level(self, name: str) -> int:
        """The finalized level of feature ``name`` (0 when not finalized), e.g. ``transaction.version``."""
        return self.finalized_features.get(name, 0)

    def supports(self, api_key: int, min_version: int = 0, max_version: int | None = None) -> bool:
        common = self.usable.get(api_key)
        if common is None:
            return False
        hi = common.hi if max_version is None else min(common.hi, max_version)
        return max(common.lo, min_version) <= hi

    def pick(self, api_key: int, min_version: int = 0, max_version: int | None = None, *, why: str = "") -> int:
        """The highest usable version of ``api_key`` within ``[min_version, max_version]``."""
        common = self.usable.get(api_key)
        hi = None if common is None else (common.hi if max_version is None else min(common.hi, max_version))
        if common is None or hi is None or max(common.lo, min_version) > hi:
            theirs = self.broker_ranges.get(api_key)
            ours = CLIENT_VERSIONS.get(api_key)
            need = f"v{min_version}+" if max_version is None else f"v{min_version}-{max_version}"
            text = (
                f"broker {self.peer} supports {api_name(api_key)} "
                f"{'v' + str(theirs) if theirs else 'not at all'}; this client can use "
                f"{'v' + str(ours) if ours else 'no version'} and the request needs {need}"
            )
            if why:
                text += f" ({why})"
            raise NoCommonVersionError(text, broker=self.peer)
        return hi
