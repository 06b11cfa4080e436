"""Share groups (KIP-932) on a kafkalog cluster with confluent-kafka's ShareConsumer: the scenarios that
tests/compat/test_share_groups_confluent.py also runs on Apache Kafka 4.4 (tests/share_scenarios.py)."""

from __future__ import annotations

import pytest

from tests import share_scenarios
from tests.share_scenarios import topic_maker

pytestmark = pytest.mark.integration


def test_three_share_consumers_split_one_partition_with_no_record_twice(scluster):
    bootstrap = scluster.bootstrap_servers
    share_scenarios.three_consumers_share_one_partition(bootstrap, topic_maker(bootstrap))


def test_released_records_are_delivered_again_with_delivery_count_two(scluster):
    bootstrap = scluster.bootstrap_servers
    share_scenarios.released_records_come_back(bootstrap, topic_maker(bootstrap))


def test_records_whose_lock_expires_go_to_another_member_with_delivery_count_two(scluster):
    bootstrap = scluster.bootstrap_servers
    share_scenarios.expired_locks_release_records(bootstrap, topic_maker(bootstrap))


def test_records_at_the_delivery_limit_or_rejected_are_archived(scluster):
    bootstrap = scluster.bootstrap_servers
    share_scenarios.delivery_limit_archives_records(bootstrap, topic_maker(bootstrap))


def test_records_whose_lock_expires_at_the_delivery_limit_are_archived(scluster):
    bootstrap = scluster.bootstrap_servers
    share_scenarios.expired_locks_at_the_limit_archive_records(bootstrap, topic_maker(bootstrap))
