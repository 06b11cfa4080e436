"""kafkalog's own ShareConsumer (spark_kafkalog.client.ShareConsumer) against Apache Kafka 4.4 (the oracle) and
kafkalog, the same scenarios (tests/client/share/scenarios.py): members splitting one partition exactly once,
RELEASE -> delivery count 2, REJECT -> never again, close releasing held records, implicit acknowledgement."""

from __future__ import annotations

import pytest

from tests.client.share import scenarios
from tests.share_scenarios import share_group

pytestmark = pytest.mark.compat


def test_three_members_split_one_partition_exactly_once(share_target):
    scenarios.members_split_one_partition(share_target.bootstrap_servers, share_target.new_topic, share_group)


def test_released_records_come_back_with_delivery_count_two(share_target):
    scenarios.released_records_come_back(share_target.bootstrap_servers, share_target.new_topic, share_group)


def test_rejected_records_never_come_back(share_target):
    scenarios.rejected_records_never_come_back(share_target.bootstrap_servers, share_target.new_topic, share_group)


def test_closing_releases_the_records_a_member_holds(share_target):
    scenarios.close_releases_records(share_target.bootstrap_servers, share_target.new_topic, share_group)


def test_implicit_mode_accepts_the_records_of_a_poll_at_the_next_poll(share_target):
    scenarios.implicit_mode_accepts_on_the_next_poll(
        share_target.bootstrap_servers, share_target.new_topic, share_group
    )
