"""Share groups (KIP-932) on the partition leader and the share coordinator: share-partition state (in-flight
records, acquisition locks, delivery counts), share sessions, and the ``__share_group_state`` log."""
