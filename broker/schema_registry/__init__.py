"""kafkalog's Schema Registry: Confluent Schema Registry's REST API, served by a broker when
``schema.registry.listeners`` is set, with its schemas kept in the compacted ``_schemas`` topic
(docs/schema-registry.md).

Modules: ``errors`` (Confluent's error codes), ``model`` (what the registry answers), ``records`` (the
``_schemas`` topic's keys and values in Confluent's formats), ``state`` (the registry's state, replayed from
those records), ``store`` (the topic: writes and the tailing read), ``registry`` (the operations, in its parts
``registry_base``, ``registry_reads``, ``registry_registration``, ``registry_deletes`` and ``registry_settings``),
``routes``, ``http_server``, ``auth`` and ``service`` (the REST listener and its start-up with a broker).
"""
