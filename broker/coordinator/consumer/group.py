"""``ConsumerGroup``: one KIP-848 consumer group's state machine, pure (no I/O, no event loop; times are
milliseconds passed in by the caller, so tests drive it with a manual clock).

Contract (the lead's; the coordinator integration codes against it):

- ``ConsumerGroup(group_id, *, assignors, default_assignor)`` starts EMPTY at group epoch 0.
- ``heartbeat(request, topics, now_ms) -> HeartbeatOutcome``: one ConsumerGroupHeartbeat, already
  authorized, for a group this coordinator owns. ``topics`` resolves subscriptions (names and the regex)
  to topic ids and partition counts. Raises ``GroupError`` (broker.coordinator.group) with Kafka's codes:
  UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, INVALID_REQUEST,
  UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION, GROUP_MAX_SIZE_REACHED. The outcome's ``records`` are
  the coordinator records (``records.py``) the change must persist, in order; the caller appends them and
  only then answers (on failure it calls ``revert``... see ``HeartbeatOutcome``).
- ``expire(now_ms) -> list[CoordinatorRecord]``: members whose session (``session_timeout_ms`` since their
  last heartbeat) or rebalance timeout (revocation not acknowledged in time) expired are fenced and removed;
  the records to persist.
- ``leave(member_id) -> list[CoordinatorRecord]`` for a member fenced by other means (e.g. DeleteGroups).
- ``validate_offset_commit(member_id, member_epoch)`` / ``validate_offset_fetch(member_id, member_epoch)``:
  OffsetCommit/OffsetFetch v9 checks (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, as Kafka).
- ``replay(record)``: apply one record read back from ``__consumer_offsets`` while loading (tombstones:
  ``value is None``); the state afterwards equals the state that wrote them.
- ``describe(topic_names) -> ConsumerGroupDescription``; ``state`` (ConsumerGroupState), ``group_epoch``,
  ``assignment_epoch``, ``members`` (member id -> ConsumerGroupMember), ``is_empty``,
  ``subscribed_topic_names()`` (for offset expiry).
"""
