"""Partition leadership and replication: Partition (leader epoch, ISR, high watermark), ReplicaManager."""
