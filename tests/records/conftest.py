"""Fixtures for the record-format tests."""

from __future__ import annotations

import resource

import pytest


@pytest.fixture(scope="module")
def address_space_limit():
    """Current size + 1 GiB: an allocation driven by a claimed size fails the test instead of passing."""
    with open("/proc/self/statm") as statm:
        current = int(statm.read().split()[0]) * resource.getpagesize()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = current + (1 << 30)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
