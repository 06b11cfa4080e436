"""The broker's view of the cluster and how it follows the registry.

``cache`` (``MetadataCache``: immutable snapshots of brokers, topics and partition states; replica
placement, ``assign_replicas``) and ``sync`` (``MetadataSync``: applies the registry's watch events to the
cache and the replica manager, in order, on the event loop). The package imports neither, so the cache's
importers (partition layer) do not load ``sync`` (cluster-state layer).
"""
