"""Share groups (KIP-932) with confluent-kafka's ShareConsumer, the same scenarios on Apache Kafka 4.4 (the
oracle) and kafkalog (tests/share_scenarios.py): records split over three members of one partition, redelivery
after RELEASE and after lock expiry with a higher delivery count, archiving at the delivery limit."""

from __future__ import annotations

import pytest

from tests import share_scenarios

pytestmark = pytest.mark.compat


def test_three_share_consumers_split_one_partition_with_no_record_twice(share_target):
    share_scenarios.three_consumers_share_one_partition(share_target.bootstrap_servers, share_target.new_topic)


def test_released_records_are_delivered_again_with_delivery_count_two(share_target):
    share_scenarios.released_records_come_back(share_target.bootstrap_servers, share_target.new_topic)


def test_records_whose_lock_expires_go_to_another_member_with_delivery_count_two(share_target):
    share_scenarios.expired_locks_release_records(share_target.bootstrap_servers, share_target.new_topic)


def test_records_at_the_delivery_limit_or_rejected_are_archived(share_target):
    share_scenarios.delivery_limit_archives_records(share_target.bootstrap_servers, share_target.new_topic)


def test_records_whose_lock_expires_at_the_delivery_limit_are_archived(share_target):
    share_scenarios.expired_locks_at_the_limit_archive_records(share_target.bootstrap_servers, share_target.new_topic)
