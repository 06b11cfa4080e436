"""Topic and config administration behind the admin APIs.

``topic_admin`` (``TopicAdmin``: topic validation, replica placement, creation, new partitions and deletion
through the registry), ``alter`` (what AlterConfigs and IncrementalAlterConfigs write), ``describe`` (what
DescribeConfigs and CreateTopics v5+ report: values, sources, synonyms) and ``dynamic``
(``DynamicBrokerConfig``: ``/config/brokers/<id>`` and ``<default>`` over ``server.properties``). The package
imports none of them: ``describe`` sits in the handler-seam layer, the others in the cluster-state layer.
"""
