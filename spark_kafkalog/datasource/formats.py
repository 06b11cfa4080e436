"""Schema Registry formats of the ``key`` and ``value`` columns: the options, validated (pure: no pyspark, no I/O).

Options (keys case-insensitive, as every option of ``format("kafkalog")``)::

    valueFormat / keyFormat                raw (default: binary, as today) | avro | json-schema | protobuf
    schema.registry.url                    required with a format: comma-separated registry URLs
    schema.registry.<conf>                 SchemaRegistryClient settings, prefix stripped (basic.auth.user.info,
                                           basic.auth.credentials.source, ssl.ca.location, ssl.certificate.location,
                                           ssl.key.location, ssl.key.password, timeout, cache.capacity,
                                           max.retries, retries.wait.ms, ...)
  reading:
    valueSubject / keySubject              default <topic>-value / <topic>-key when the read names one topic
    valueSchemaVersion / keySchemaVersion  "latest" (default) or a version number: the reader schema
    valueSchemaId / keySchemaId            the reader schema by id (instead of subject and version)
    valueProtobufMessage / keyProtobufMessage  full name of the reader's message (default: the file's first)
    mode                                   FAILFAST (default) | PERMISSIVE, as Spark's from_avro
    columnNameOfCorruptRecord              PERMISSIVE only: default _corrupt_record
  writing:
    value.subject.name.strategy / key.subject.name.strategy  TopicNameStrategy (default) | RecordNameStrategy |
                                           TopicRecordNameStrategy (Confluent's full class names accepted)
    auto.register.schemas                  true (default): register the writer schema under the subject
    use.latest.version                     false (default): true writes with the subject's latest version
    normalize.schemas                      false (default)
    valueSchema / keySchema                the writer schema's text; default: derived from the column's type
    recordName / recordNamespace           the derived schema's record name (topLevelRecord) and namespace
    valueProtobufMessage / keyProtobufMessage  the message of an explicit Protobuf writer schema

Results are frozen, picklable dataclasses; ``FormatOptionError`` names the option (``options`` raises it as
``KafkaOptionError``; this module imports nothing of the data source, so ``options`` can import it). The registry settings may hold
secrets (``basic.auth.user.info``, ``ssl.key.password``, credentials in a URL): they are left out of every
``repr`` and never shown in errors.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from spark_kafkalog.datasource.format_options import (
    READ_FORMAT_OPTIONS,
    REGISTRY_PREFIX,
    REGISTRY_URL,
    WRITE_FORMAT_OPTIONS,
)
from spark_kafkalog.schemas.parsed_schema import AVRO, JSON, PROTOBUF

__all__ = [
    "COLUMNS",
    "FormatOptionError",
    "FAILFAST",
    "FORMAT_NAMES",
    "PERMISSIVE",
    "READ_FORMAT_OPTIONS",
    "REGISTRY_PREFIX",
    "RECORD_NAME",
    "TOPIC_NAME",
    "TOPIC_RECORD_NAME",
    "WRITE_FORMAT_OPTIONS",
    "ColumnFormat",
    "ReadFormats",
    "RegistrySettings",
    "WriteFormats",
    "parse_read_formats",
    "parse_write_formats",
]

COLUMNS = ("key", "value")

FORMAT_NAMES = {"avro": AVRO, "json-schema": JSON, "protobuf": PROTOBUF}
"""Option value -> the registry's schema type (``raw``: no format)."""

FAILFAST, PERMISSIVE = "FAILFAST", "PERMISSIVE"
DEFAULT_CORRUPT_COLUMN = "_corrupt_record"

TOPIC_NAME, RECORD_NAME, TOPIC_RECORD_NAME = "TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy"
_STRATEGIES = {
    **{n.lower(): n for n in (TOPIC_NAME, RECORD_NAME, TOPIC_RECORD_NAME)},
    **{f"io.confluent.kafka.serializers.subject.{n}".lower(): n for n in (TOPIC_NAME, RECORD_NAME, TOPIC_RECORD_NAME)},
}

REGISTRY_CONF_KEYS = (
    "url",
    "basic.auth.user.info",
    "basic.auth.credentials.source",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "timeout",
    "cache.capacity",
    "max.retries",
    "retries.wait.ms",
    "retries.max.wait.ms",
    "cache.latest.ttl.sec",
)
"""What ``schema.registry.<conf>`` may name: the settings of ``SchemaRegistryClient`` (Confluent's names)."""


class FormatOptionError(ValueError):
    """An invalid, missing or conflicting format option; the message names it (``options`` raises it again
    as ``KafkaOptionError``)."""


_KAFKA_COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers")


@dataclass(frozen=True)
class RegistrySettings:
    """Where the registry is and how to reach it: ``SchemaRegistryClient``'s configuration. ``conf`` is kept
    out of ``repr`` (credentials); ``urls`` shows the URLs without any user info."""

    conf: tuple[tuple[str, str], ...] = field(repr=False)
    urls: tuple[str, ...] = ()

    def client_conf(self) -> dict[str, str]:
        """The configuration ``SchemaRegistryClient`` takes (``url`` and the other keys)."""
        return dict(self.conf)

    @property
    def cache_key(self) -> tuple[tuple[str, str], ...]:
        """Hashable identity of the settings (one client and schema cache per key in a process)."""
        return self.conf


@dataclass(frozen=True)
class ColumnFormat:
    """The format of one column (``key`` or ``value``).

    Reading: the reader schema is ``schema_id`` when set, else ``version`` (an int or ``"latest"``) of
    ``subject``; ``ReadFormats.resolved`` pins ``schema_id`` at planning. Writing: ``strategy`` names the
    subject, ``schema`` is the explicit writer schema text (None: derived from the column's type).
    """

    column: str
    schema_type: str
    subject: str | None = None
    version: int | str = "latest"
    schema_id: int | None = None
    protobuf_message: str | None = None
    strategy: str = TOPIC_NAME
    schema: str | None = None

    @property
    def format_name(self) -> str:
        return next(name for name, t in FORMAT_NAMES.items() if t == self.schema_type)

    def describe(self) -> str:
        """Where the reader schema comes from, for messages (``subject 'orders-value' version latest``)."""
        if self.schema_id is not None:
            return f"schema id {self.schema_id}"
        return f"subject '{self.subject}' version {self.version}"


@dataclass(frozen=True)
class ReadFormats:
    """Read settings: the formats of ``key`` / ``value`` (None: raw binary) and the failure mode."""

    registry: RegistrySettings
    key: ColumnFormat | None = None
    value: ColumnFormat | None = None
    mode: str = FAILFAST
    corrupt_column: str = DEFAULT_CORRUPT_COLUMN

    @property
    def columns(self) -> tuple[ColumnFormat, ...]:
        return tuple(c for c in (self.key, self.value) if c is not None)

    @property
    def permissive(self) -> bool:
        return self.mode == PERMISSIVE


@dataclass(frozen=True)
class WriteFormats:
    """Write settings: the formats of ``key`` / ``value`` and how writer schemas reach the registry."""

    registry: RegistrySettings
    key: ColumnFormat | None = None
    value: ColumnFormat | None = None
    auto_register: bool = True
    use_latest_version: bool = False
    normalize: bool = False
    record_name: str = "topLevelRecord"
    record_namespace: str = ""

    @property
    def columns(self) -> tuple[ColumnFormat, ...]:
        return tuple(c for c in (self.key, self.value) if c is not None)

    def formatted(self, column: str) -> bool:
        return any(c.column == column for c in self.columns)


def _get(opts: Mapping[str, str], name: str) -> str | None:
    value = opts.get(name.lower())
    return None if value is None else value.strip()


def _bool(opts: Mapping[str, str], name: str, default: bool) -> bool:
    raw = _get(opts, name)
    if raw is None:
        return default
    if raw.lower() not in ("true", "false"):
        raise FormatOptionError(
            f"Invalid value '{raw}' for option '{name}': must be true or false, e.g. .option(\"{name}\", \"true\")"
        )
    return raw.lower() == "true"


def _format(opts: Mapping[str, str], column: str) -> str | None:
    name = f"{column}Format"
    raw = _get(opts, name)
    if raw is None or raw.lower() == "raw":
        return None
    schema_type = FORMAT_NAMES.get(raw.lower())
    if schema_type is None:
        raise FormatOptionError(
            f"Invalid value '{raw}' for option '{name}': one of raw, {', '.join(FORMAT_NAMES)}, e.g. "
            f'.option("{name}", "avro")'
        )
    return schema_type


def _registry(opts: Mapping[str, str]) -> RegistrySettings:
    url = _get(opts, REGISTRY_URL)
    if not url:
        raise FormatOptionError(
            f"Option '{REGISTRY_URL}' must be specified with valueFormat/keyFormat avro, json-schema or protobuf: "
            f'the schemas come from a Schema Registry, e.g. .option("{REGISTRY_URL}", "http://localhost:8081")'
        )
    urls = []
    for one in url.split(","):
        one = one.strip()
        parts = urlsplit(one)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            shown = f"{parts.scheme}://{parts.hostname}" if parts.hostname else "one entry"
            raise FormatOptionError(
                f"Invalid value for option '{REGISTRY_URL}': {shown} is not an http:// or https:// URL; give "
                f'comma-separated URLs, e.g. .option("{REGISTRY_URL}", "https://registry1:8081,https://registry2:8081")'
            )
        port = f":{parts.port}" if parts.port else ""
        urls.append(f"{parts.scheme}://{parts.hostname}{port}{parts.path}")
    conf = {"url": url}
    for key, value in opts.items():
        if not key.startswith(REGISTRY_PREFIX) or key == REGISTRY_URL:
            continue
        name = key[len(REGISTRY_PREFIX) :]
        if name not in REGISTRY_CONF_KEYS and not name.startswith("ssl."):
            close = difflib.get_close_matches(name, REGISTRY_CONF_KEYS, n=1, cutoff=0.6)
            hint = f"; did you mean '{REGISTRY_PREFIX}{close[0]}'?" if close else ""
            raise FormatOptionError(
                f"Unknown Schema Registry option '{key}'{hint} Known: "
                f"{', '.join(REGISTRY_PREFIX + k for k in REGISTRY_CONF_KEYS)}"
            )
        if value is None or not value.strip():
            raise FormatOptionError(f"Option '{key}' is empty; give a value or drop it")
        conf[name] = value.strip()
    return RegistrySettings(tuple(sorted(conf.items())), tuple(urls))


def _only_with_format(opts: Mapping[str, str], names: tuple[str, ...], formatted: dict[str, str | None]) -> None:
    """Refuse a column's format options when that column has no format."""
    for name in names:
        if name.lower() not in opts:
            continue
        column = "key" if name.lower().startswith("key") else "value"
        if formatted[column] is None:
            raise FormatOptionError(
                f"Option '{name}' applies only with option '{column}Format' avro, json-schema or protobuf; set one "
                f'(e.g. .option("{column}Format", "avro")) or remove it'
            )


def _read_column(opts: Mapping[str, str], column: str, schema_type: str, topic: str | None) -> ColumnFormat:
    subject = _get(opts, f"{column}Subject")
    version_name, id_name = f"{column}SchemaVersion", f"{column}SchemaId"
    raw_version, raw_id = _get(opts, version_name), _get(opts, id_name)
    if raw_id is not None and (raw_version is not None or subject is not None):
        raise FormatOptionError(
            f"Option '{id_name}' pins the reader schema: give it alone, or '{column}Subject' with "
            f"'{version_name}', not both"
        )
    schema_id = None
    version: int | str = "latest"
    if raw_id is not None:
        if not raw_id.isdigit():
            raise FormatOptionError(
                f"Invalid value '{raw_id}' for option '{id_name}': a schema id (a non-negative integer), e.g. "
                f'.option("{id_name}", "42")'
            )
        schema_id = int(raw_id)
    else:
        if raw_version is not None and raw_version.lower() != "latest":
            if not raw_version.isdigit() or int(raw_version) < 1:
                raise FormatOptionError(
                    f"Invalid value '{raw_version}' for option '{version_name}': 'latest' or a version number "
                    f'(>= 1), e.g. .option("{version_name}", "3")'
                )
            version = int(raw_version)
        if subject is None:
            if topic is None:
                raise FormatOptionError(
                    f"Option '{column}Subject' is required when the read does not name exactly one topic (the "
                    f'default subject is <topic>-{column}), e.g. .option("{column}Subject", "orders-{column}")'
                )
            subject = f"{topic}-{column}"
        elif not subject:
            raise FormatOptionError(f"Option '{column}Subject' is empty; give a subject, e.g. \"orders-{column}\"")
    return ColumnFormat(column, schema_type, subject, version, schema_id, _protobuf_message(opts, column, schema_type))


def _protobuf_message(opts: Mapping[str, str], column: str, schema_type: str) -> str | None:
    name = f"{column}ProtobufMessage"
    message = _get(opts, name)
    if message is not None and schema_type != PROTOBUF:
        raise FormatOptionError(f"Option '{name}' applies only with option '{column}Format' protobuf")
    return message or None


def parse_read_formats(opts: Mapping[str, str], topics: tuple[str, ...] | None) -> ReadFormats | None:
    """The read formats of lower-cased ``opts`` (None: both columns raw), for a read of ``topics`` (the
    topics ``subscribe`` / ``assign`` name; None for ``subscribePattern``): the default subjects need one."""
    formatted = {column: _format(opts, column) for column in COLUMNS}
    per_column = [n for n in READ_FORMAT_OPTIONS if n.lower().startswith(("key", "value"))]
    _only_with_format(opts, tuple(n for n in per_column if not n.endswith("Format")), formatted)
    if all(v is None for v in formatted.values()):
        given = [k for k in opts if k.startswith(REGISTRY_PREFIX)]
        for name in ("mode", "columnNameOfCorruptRecord", *given):
            if name.lower() in opts:
                raise FormatOptionError(
                    f"Option '{name}' applies only with valueFormat/keyFormat avro, json-schema or protobuf; set "
                    'one (e.g. .option("valueFormat", "avro")) or remove it'
                )
        return None
    registry = _registry(opts)
    mode = (_get(opts, "mode") or FAILFAST).upper()
    if mode not in (FAILFAST, PERMISSIVE):
        raise FormatOptionError(
            f"Invalid value '{_get(opts, 'mode')}' for option 'mode': FAILFAST or PERMISSIVE, e.g. "
            '.option("mode", "PERMISSIVE")'
        )
    corrupt = _get(opts, "columnNameOfCorruptRecord")
    if corrupt is not None and (not corrupt or corrupt in _KAFKA_COLUMNS):
        raise FormatOptionError(
            f"Invalid value '{corrupt}' for option 'columnNameOfCorruptRecord': a column name other than "
            f'{", ".join(_KAFKA_COLUMNS)}, e.g. "_corrupt_record"'
        )
    topic = topics[0] if topics is not None and len(set(topics)) == 1 else None
    columns = {c: _read_column(opts, c, t, topic) for c, t in formatted.items() if t is not None}
    return ReadFormats(registry, columns.get("key"), columns.get("value"), mode, corrupt or DEFAULT_CORRUPT_COLUMN)


def _strategy(opts: Mapping[str, str], column: str) -> str:
    name = f"{column}.subject.name.strategy"
    raw = _get(opts, name)
    if raw is None:
        return TOPIC_NAME
    strategy = _STRATEGIES.get(raw.lower())
    if strategy is None:
        raise FormatOptionError(
            f"Invalid value '{raw}' for option '{name}': one of {TOPIC_NAME}, {RECORD_NAME}, {TOPIC_RECORD_NAME} "
            f"(or Confluent's io.confluent.kafka.serializers.subject.* class names), e.g. "
            f'.option("{name}", "{RECORD_NAME}")'
        )
    return strategy


def parse_write_formats(opts: Mapping[str, str]) -> WriteFormats | None:
    """The write formats of lower-cased ``opts`` (None: both columns raw)."""
    formatted = {column: _format(opts, column) for column in COLUMNS}
    per_column = [n for n in WRITE_FORMAT_OPTIONS if n.lower().startswith(("key", "value"))]
    _only_with_format(opts, tuple(n for n in per_column if not n.endswith("Format")), formatted)
    if all(v is None for v in formatted.values()):
        shared = ("auto.register.schemas", "use.latest.version", "normalize.schemas", "recordName", "recordNamespace")
        for name in (*shared, *(k for k in opts if k.startswith(REGISTRY_PREFIX))):
            if name.lower() in opts:
                raise FormatOptionError(
                    f"Option '{name}' applies only with valueFormat/keyFormat avro, json-schema or protobuf; set "
                    'one (e.g. .option("valueFormat", "avro")) or remove it'
                )
        return None
    registry = _registry(opts)
    columns = {}
    for column, schema_type in formatted.items():
        if schema_type is None:
            continue
        schema = opts.get(f"{column}schema")
        if schema is not None and not schema.strip():
            raise FormatOptionError(f"Option '{column}Schema' is empty; give the writer schema's text or drop it")
        columns[column] = ColumnFormat(
            column,
            schema_type,
            protobuf_message=_protobuf_message(opts, column, schema_type),
            strategy=_strategy(opts, column),
            schema=schema,
        )
    record_name = _get(opts, "recordName")
    if record_name is not None and not record_name:
        raise FormatOptionError("Option 'recordName' is empty; give a record name, e.g. \"Order\"")
    return WriteFormats(
        registry,
        columns.get("key"),
        columns.get("value"),
        auto_register=_bool(opts, "auto.register.schemas", True),
        use_latest_version=_bool(opts, "use.latest.version", False),
        normalize=_bool(opts, "normalize.schemas", False),
        record_name=record_name or "topLevelRecord",
        record_namespace=_get(opts, "recordNamespace") or "",
    )
