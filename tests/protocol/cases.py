"""Parametrisation helpers: every (API, version) and every data payload version we declare."""

from __future__ import annotations

from spark_kafkalog.protocol.apis import API_BY_KEY, DATA_BY_NAME


def api_version_cases() -> list[tuple[int, int]]:
    return [(key, v) for key, api in sorted(API_BY_KEY.items()) for v in range(api.min_version, api.max_version + 1)]


def case_id(case: tuple[int, int]) -> str:
    return f"{API_BY_KEY[case[0]].name}-v{case[1]}"


def data_version_cases() -> list[tuple[str, int]]:
    return [(name, v) for name, d in sorted(DATA_BY_NAME.items()) for v in range(d.versions.lo, d.versions.hi + 1)]
