"""Consumer groups: the classic group state machine (``group``), the ``__consumer_offsets`` formats
(``offsets_topic``), the offset store (``offset_store``) and the coordinator runtime (``group_coordinator``,
with its parts ``group_membership`` and ``group_offsets``)."""
