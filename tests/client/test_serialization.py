"""The serializer objects: round trips, Kafka's byte layouts for int32 and double against known bytes, the
errors (naming what was wrong, the field and the topic), how the clients' per-record functions call them, the
names the settings accept, and byte compatibility with confluent-kafka's own serializers both ways."""

from __future__ import annotations

import math
import pickle
import struct

import confluent_kafka.serialization as confluent
import pytest

from spark_kafkalog.client import (
    ClientConfig,
    ConfigError,
    Deserializer,
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    JSONDeserializer,
    JSONSerializer,
    KafkaClientError,
    KeyDeserializationError,
    KeySerializationError,
    MessageField,
    SerializationContext,
    SerializationError,
    Serializer,
    StringDeserializer,
    StringSerializer,
    ValueDeserializationError,
    ValueSerializationError,
)
from spark_kafkalog.client.serialization import resolve_deserializer, resolve_serializer

KEY_CTX = SerializationContext("events", MessageField.KEY)
VALUE_CTX = SerializationContext("events", MessageField.VALUE, [("h", b"1")])

# (serializer, deserializer, object) - every pair must give the object back
ROUND_TRIPS = [
    (StringSerializer(), StringDeserializer(), ""),
    (StringSerializer(), StringDeserializer(), "héllo wörld ✓ 🎉"),
    (StringSerializer("latin_1"), StringDeserializer("latin-1"), "café"),
    (StringSerializer("utf_16"), StringDeserializer("utf_16"), "ünïcode"),
    (IntegerSerializer(), IntegerDeserializer(), 0),
    (IntegerSerializer(), IntegerDeserializer(), -1),
    (IntegerSerializer(), IntegerDeserializer(), 2**31 - 1),
    (IntegerSerializer(), IntegerDeserializer(), -(2**31)),
    (IntegerSerializer(), IntegerDeserializer(), 123456789),
    (DoubleSerializer(), DoubleDeserializer(), 0.0),
    (DoubleSerializer(), DoubleDeserializer(), -2.5),
    (DoubleSerializer(), DoubleDeserializer(), 1e308),
    (DoubleSerializer(), DoubleDeserializer(), 5e-324),  # the smallest subnormal
    (DoubleSerializer(), DoubleDeserializer(), math.inf),
    (DoubleSerializer(), DoubleDeserializer(), -math.inf),
    (JSONSerializer(), JSONDeserializer(), {"a": [1, 2.5, None, True], "b": {"c": "ü"}}),
    (JSONSerializer(), JSONDeserializer(), [1, "two", 3.0]),
    (JSONSerializer(), JSONDeserializer(), "just a string"),
    (JSONSerializer(), JSONDeserializer(), 0),
]


@pytest.mark.parametrize(("serializer", "deserializer", "obj"), ROUND_TRIPS)
def test_every_builtin_gives_back_what_it_wrote(serializer, deserializer, obj):
    for ctx in (None, KEY_CTX, VALUE_CTX):
        data = serializer(obj, ctx)
        assert isinstance(data, bytes)
        back = deserializer(data, ctx)
        assert back == obj and type(back) is type(obj)


@pytest.mark.parametrize(
    ("serializer", "deserializer"),
    [
        (cls(), dcls())
        for cls, dcls in [(StringSerializer, StringDeserializer), (IntegerSerializer, IntegerDeserializer)]
    ]
    + [(DoubleSerializer(), DoubleDeserializer()), (JSONSerializer(), JSONDeserializer())],
)
def test_none_passes_as_none_both_ways(serializer, deserializer):
    assert serializer(None) is None and serializer(None, KEY_CTX) is None
    assert deserializer(None) is None and deserializer(None, VALUE_CTX) is None


# Kafka's IntegerSerializer: new byte[] {(byte) (data >>> 24), (byte) (data >>> 16), (byte) (data >>> 8), (byte) data}
INT32_BYTES = [
    (0, "00000000"),
    (1, "00000001"),
    (256, "00000100"),
    (-1, "ffffffff"),
    (-2, "fffffffe"),
    (2**31 - 1, "7fffffff"),
    (-(2**31), "80000000"),
    (0x12345678, "12345678"),
]

# Kafka's DoubleSerializer: Double.doubleToLongBits(data), big-endian (NaN canonical: 0x7ff8000000000000)
FLOAT64_BYTES = [
    (1.0, "3ff0000000000000"),
    (-2.0, "c000000000000000"),
    (0.1, "3fb999999999999a"),
    (0.0, "0000000000000000"),
    (-0.0, "8000000000000000"),
    (math.inf, "7ff0000000000000"),
    (-math.inf, "fff0000000000000"),
    (math.nan, "7ff8000000000000"),
    (5e-324, "0000000000000001"),
    (3, "4008000000000000"),  # an int is written as the double it equals
]


@pytest.mark.parametrize(("number", "hex_bytes"), INT32_BYTES)
def test_integers_are_kafkas_four_big_endian_bytes(number, hex_bytes):
    assert IntegerSerializer()(number).hex() == hex_bytes
    assert IntegerDeserializer()(bytes.fromhex(hex_bytes)) == number


@pytest.mark.parametrize(("number", "hex_bytes"), FLOAT64_BYTES)
def test_doubles_are_kafkas_eight_big_endian_ieee754_bytes(number, hex_bytes):
    assert DoubleSerializer()(number).hex() == hex_bytes
    back = DoubleDeserializer()(bytes.fromhex(hex_bytes))
    assert (
        math.isnan(back)
        if math.isnan(number)
        else (back == number and math.copysign(1, back) == math.copysign(1, number))
    )


def test_json_is_compact_utf8_and_to_dict_from_dict_hooks_see_the_context():
    seen = []

    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

    def to_dict(point, ctx):
        seen.append(("to", ctx))
        return {"x": point.x, "y": point.y, "name": "ñ"}

    def from_dict(data, ctx):
        seen.append(("from", ctx))
        return Point(data["x"], data["y"])

    data = JSONSerializer(to_dict)(Point(1, 2), VALUE_CTX)
    assert data == '{"x":1,"y":2,"name":"ñ"}'.encode()
    assert JSONSerializer(sort_keys=True)({"b": 1, "a": [1, 2]}) == b'{"a":[1,2],"b":1}'
    point = JSONDeserializer(from_dict)(data, KEY_CTX)
    assert (point.x, point.y) == (1, 2)
    assert seen == [("to", VALUE_CTX), ("from", KEY_CTX)]
    assert JSONDeserializer()(b'{"a":  [1 ,2]}') == {"a": [1, 2]}


# (callable, argument, the error message's pattern); called with KEY_CTX: the message names the key and topic
ERRORS = [
    (IntegerSerializer(), 2**31, r"IntegerSerializer: 2147483648 is outside int32 \[-2147483648, 2147483647\]"),
    (IntegerSerializer(), -(2**31) - 1, r"IntegerSerializer: -2147483649 is outside int32"),
    (IntegerSerializer(), 10**20, r"IntegerSerializer: 100000000000000000000 is outside int32"),
    (IntegerSerializer(), 1.5, r"IntegerSerializer takes an int, got float"),
    (IntegerSerializer(), "7", r"IntegerSerializer takes an int, got str"),
    (IntegerSerializer(), True, r"IntegerSerializer takes an int, got bool True"),
    (IntegerDeserializer(), b"\x00\x00\x01", r"IntegerDeserializer needs exactly 4 bytes, got 3"),
    (IntegerDeserializer(), b"\x00" * 8, r"IntegerDeserializer needs exactly 4 bytes, got 8"),
    (DoubleSerializer(), "1.0", r"DoubleSerializer takes a float, got str"),
    (DoubleSerializer(), False, r"DoubleSerializer takes a float, got bool"),
    (DoubleSerializer(), 10**400, r"DoubleSerializer: 1000.* is too large for a double"),
    (DoubleDeserializer(), b"\x00" * 4, r"DoubleDeserializer needs exactly 8 bytes, got 4"),
    (StringSerializer(), b"bytes", r"StringSerializer takes a str, got bytes"),
    (StringSerializer(), 12, r"StringSerializer takes a str, got int"),
    (StringSerializer("ascii"), "aé", r"StringSerializer cannot encode character 1 in ascii"),
    (StringDeserializer(), b"ok\xff", r"StringDeserializer cannot decode byte 2 as utf-8"),
    (JSONSerializer(), {"a": math.nan}, r"JSONSerializer cannot write a dict: Out of range float values"),
    (JSONSerializer(), {1, 2}, r"JSONSerializer cannot write a set: Object of type set is not JSON serializable"),
    (JSONDeserializer(), b'{"a": ', r"JSONDeserializer cannot read 6 bytes: Expecting value"),
    (JSONDeserializer(), b'"\xff"', r"JSONDeserializer cannot read 3 bytes"),
]


@pytest.mark.parametrize(("fn", "arg", "pattern"), ERRORS)
def test_a_bad_object_or_bad_bytes_raise_serialization_error_naming_what_field_and_topic(fn, arg, pattern):
    with pytest.raises(SerializationError, match=pattern) as info:
        fn(arg, KEY_CTX)
    error = info.value
    assert str(error).endswith("(key of topic 'events')")
    assert (error.topic, error.field, error.retriable) == ("events", MessageField.KEY, False)
    assert isinstance(error, KafkaClientError)
    with pytest.raises(SerializationError, match=pattern) as info:  # without a context: no field named
        fn(arg)
    assert "topic" not in str(info.value) and info.value.field is None


def test_an_unknown_codec_is_refused_when_the_serializer_is_built():
    with pytest.raises(ValueError, match="unknown text codec 'utf-9'"):
        StringSerializer("utf-9")
    with pytest.raises(ValueError, match="unknown text codec 'klingon'"):
        StringDeserializer("klingon")


def test_builtins_compare_by_settings_pickle_and_repr():
    assert IntegerSerializer() == IntegerSerializer() and IntegerSerializer() != IntegerDeserializer()
    assert StringSerializer("latin_1") == StringSerializer("latin-1") != StringSerializer()
    assert JSONSerializer(sort_keys=True) != JSONSerializer()
    for obj in (StringSerializer("latin_1"), IntegerDeserializer(), DoubleSerializer(), JSONSerializer(sort_keys=True)):
        copy = pickle.loads(pickle.dumps(obj))
        assert copy == obj and hash(copy) == hash(obj)
    assert repr(StringSerializer()) == "StringSerializer(codec='utf-8')"
    assert repr(IntegerSerializer()) == "IntegerSerializer()"
    assert repr(SerializationContext("t", MessageField.VALUE)) == (
        "SerializationContext(topic='t', field='value', headers=None)"
    )


def test_serializer_bases_are_abstract_and_a_users_subclass_is_a_serializer():
    with pytest.raises(TypeError):
        Serializer()  # type: ignore[abstract]
    with pytest.raises(TypeError):
        Deserializer()  # type: ignore[abstract]

    class Upper(Serializer[str]):
        def __call__(self, obj, ctx=None):
            return None if obj is None else obj.upper().encode()

    assert Upper()("abc", VALUE_CTX) == b"ABC"


# --- the clients' per-record functions ------------------------------------------------------------------


class Recording(Serializer[str]):
    """A serializer that records its contexts and adds a header naming the field."""

    def __init__(self):
        self.calls = []

    def __call__(self, obj, ctx=None):
        self.calls.append(ctx)
        if isinstance(ctx.headers, list):
            ctx.headers.append((f"{ctx.field}-format", b"upper"))
        return obj.upper().encode()


class RecordingDeserializer(Deserializer[str]):
    def __init__(self):
        self.calls = []

    def __call__(self, data, ctx=None):
        self.calls.append(ctx)
        return data.decode().lower()


def test_serializer_objects_get_topic_field_and_headers_and_may_add_headers():
    key_serializer, value_serializer = Recording(), Recording()
    config = ClientConfig.create(key_serializer=key_serializer, value_serializer=value_serializer)
    headers = [("trace", b"1")]
    assert config.key_serializer_for()("k", "orders", headers) == b"K"
    assert config.value_serializer_for()("v", "orders", headers) == b"V"
    assert key_serializer.calls == [SerializationContext("orders", MessageField.KEY, headers)]
    assert value_serializer.calls[0].field is MessageField.VALUE and value_serializer.calls[0].topic == "orders"
    assert headers == [("trace", b"1"), ("key-format", b"upper"), ("value-format", b"upper")]


def test_deserializer_objects_get_topic_field_and_the_records_headers():
    deserializer = RecordingDeserializer()
    config = ClientConfig.create(value_deserializer=deserializer)
    headers = [("h", b"x")]
    assert config.value_deserializer_for()(b"ABC", "orders", headers) == "abc"
    assert deserializer.calls == [SerializationContext("orders", MessageField.VALUE, headers)]
    assert config.key_deserializer_for()(b"raw", "orders", headers) == b"raw"  # none set: the bytes as they are


def test_plain_callables_keep_their_one_argument_call_and_their_errors():
    calls = []

    def plain(obj):
        calls.append(obj)
        if obj == "bad":
            raise LookupError("no such thing")
        return obj.encode()

    config = ClientConfig.create(value_serializer=plain, key_deserializer=lambda data: data[::-1])
    assert config.value_serializer_for()("ok", "t", None) == b"ok" and calls == ["ok"]
    with pytest.raises(LookupError, match="no such thing"):
        config.value_serializer_for()("bad", "t", None)
    assert config.key_deserializer_for()(b"abc", "t", None) == b"cba"
    default = ClientConfig.create().key_serializer_for()
    assert default(b"x", "t", None) == b"x" and default("é", "t", None) == "é".encode()
    with pytest.raises(TypeError, match="cannot send a int without a serializer"):
        default(5, "t", None)


@pytest.mark.parametrize(
    ("field", "error_class"), [(MessageField.KEY, KeySerializationError), (MessageField.VALUE, ValueSerializationError)]
)
def test_failures_of_serializer_objects_become_key_or_value_serialization_errors(field, error_class):
    with pytest.raises(
        error_class, match=r"IntegerSerializer: 4294967296 is outside int32.*\(" + field + " of topic 'm'\\)"
    ):
        resolve_serializer(IntegerSerializer(), field, lambda obj, topic, headers: b"")(2**32, "m", None)

    class Broken(Serializer[object]):
        def __call__(self, obj, ctx=None):
            raise RuntimeError("schema registry unreachable")

    with pytest.raises(error_class) as info:
        resolve_serializer(Broken(), field, lambda obj, topic, headers: b"")(1, "m", None)
    assert (
        str(info.value)
        == f"{field}.serializer Broken raised RuntimeError on the {field} of topic 'm': schema registry unreachable"
    )
    assert (info.value.topic, info.value.field) == ("m", field)
    assert isinstance(info.value.__cause__, RuntimeError)


@pytest.mark.parametrize(
    ("field", "error_class"),
    [(MessageField.KEY, KeyDeserializationError), (MessageField.VALUE, ValueDeserializationError)],
)
def test_failures_of_deserializer_objects_become_key_or_value_deserialization_errors(field, error_class):
    with pytest.raises(error_class, match=r"IntegerDeserializer needs exactly 4 bytes, got 2 \(" + field) as info:
        resolve_deserializer(IntegerDeserializer(), field)(b"\x00\x01", "m", [])
    assert (info.value.topic, info.value.field) == ("m", field)


# --- the names the settings take ---------------------------------------------------------------------------

JAVA = "org.apache.kafka.common.serialization."


@pytest.mark.parametrize(
    ("setting", "name", "obj", "expected"),
    [
        ("key.serializer", JAVA + "IntegerSerializer", 7, b"\x00\x00\x00\x07"),
        ("value.serializer", "IntegerSerializer", -1, b"\xff\xff\xff\xff"),
        ("value.serializer", "integer", 1, b"\x00\x00\x00\x01"),
        ("value.serializer", JAVA + "DoubleSerializer", 1.0, bytes.fromhex("3ff0000000000000")),
        ("key.serializer", "double", -2.0, bytes.fromhex("c000000000000000")),
        ("value.serializer", JAVA + "StringSerializer", "é", "é".encode()),
        ("value.serializer", JAVA + "ByteArraySerializer", b"\x00\x01", b"\x00\x01"),
        ("value.serializer", "json", {"a": 1}, b'{"a":1}'),
        ("key.deserializer", JAVA + "IntegerDeserializer", b"\x00\x00\x01\x00", 256),
        ("value.deserializer", "DoubleDeserializer", bytes.fromhex("3fb999999999999a"), 0.1),
        ("value.deserializer", JAVA + "StringDeserializer", "ü".encode(), "ü"),
        ("value.deserializer", JAVA + "ByteArrayDeserializer", b"\xff", b"\xff"),
        ("value.deserializer", "json", b'{"a":[1]}', {"a": [1]}),
    ],
)
def test_settings_take_kafkas_java_class_names_and_the_short_names(setting, name, obj, expected):
    config = ClientConfig.from_kafka_properties({setting: name})
    attr = setting.replace(".", "_")
    fn = getattr(config, f"{attr}_for")()
    assert fn(obj, "t", None) == expected


def test_an_unknown_serializer_name_lists_the_known_ones():
    with pytest.raises(ConfigError, match=r"'value.serializer': unknown name '\S*LongSerializer'.*IntegerSerializer"):
        ClientConfig.create({"value.serializer": JAVA + "LongSerializer"})


# --- confluent-kafka's own serializers -------------------------------------------------------------------

COMPAT_VALUES = [
    ("Integer", [0, 1, -1, 2**31 - 1, -(2**31), 0x01020304]),
    ("Double", [0.0, -0.0, 1.5, -1e-300, math.inf, 1e308]),
    ("String", ["", "plain", "héllo ✓ 🎉"]),
]


@pytest.mark.parametrize(("kind", "values"), COMPAT_VALUES)
def test_confluent_kafka_reads_what_ours_write_and_ours_read_what_it_writes(kind, values):
    ours_ser, ours_de = globals()[f"{kind}Serializer"](), globals()[f"{kind}Deserializer"]()
    theirs_ser, theirs_de = getattr(confluent, f"{kind}Serializer")(), getattr(confluent, f"{kind}Deserializer")()
    their_ctx = confluent.SerializationContext("events", confluent.MessageField.VALUE)
    for value in values:
        ours = ours_ser(value, VALUE_CTX)
        theirs = theirs_ser(value, their_ctx)
        assert ours == theirs
        assert theirs_de(ours, their_ctx) == value
        assert ours_de(theirs, VALUE_CTX) == value


def test_confluent_kafka_serializer_objects_are_called_with_a_context_they_can_read():
    seen = []

    class TopicNamed(confluent.Serializer):
        """As confluent-kafka's schema-registry serializers: the subject is '<topic>-<field>'."""

        def __call__(self, obj, ctx=None):
            assert ctx.field == confluent.MessageField.VALUE != confluent.MessageField.KEY  # as theirs compare
            seen.append(f"{ctx.topic}-{ctx.field}")
            return struct.pack(">i", len(seen)) + obj.encode()

    fn = ClientConfig.create(value_serializer=TopicNamed()).value_serializer_for()
    assert fn("x", "orders", None) == b"\x00\x00\x00\x01x"
    assert seen == ["orders-value"]
    theirs = ClientConfig.create(key_deserializer=confluent.IntegerDeserializer()).key_deserializer_for()
    assert theirs(b"\x00\x00\x00\x2a", "orders", None) == 42


def test_a_serializer_class_is_instantiated_as_kafka_instantiates_a_configured_class():
    config = ClientConfig.create(key_serializer=IntegerSerializer, value_deserializer=DoubleDeserializer)
    assert config.key_serializer_for()(3, "t", None) == b"\x00\x00\x00\x03"
    assert config.value_deserializer_for()(bytes.fromhex("3ff0000000000000"), "t", None) == 1.0


class Lowercase(RecordingDeserializer):
    pass


@pytest.mark.parametrize(
    ("settings", "method", "message"),
    [
        (
            {"value_deserializer": IntegerSerializer()},
            "value_deserializer_for",
            "setting 'value.deserializer': IntegerSerializer is a Serializer; pass a Deserializer "
            "(e.g. IntegerDeserializer())",
        ),
        (
            {"key_serializer": StringDeserializer()},
            "key_serializer_for",
            "setting 'key.serializer': StringDeserializer is a Deserializer; pass a Serializer (e.g. StringSerializer())",
        ),
        (
            {"key_serializer": Lowercase()},
            "key_serializer_for",
            "setting 'key.serializer': Lowercase is a Deserializer; pass a Serializer",
        ),
    ],
)
def test_a_serializer_where_a_deserializer_belongs_is_a_config_error(settings, method, message):
    with pytest.raises(ConfigError) as info:
        getattr(ClientConfig.create(**settings), method)()
    assert str(info.value) == message
