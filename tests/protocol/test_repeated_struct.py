"""A nested struct declared identically under two fields of one struct (Kafka's ``commonStructs`` used twice, as
ConsumerGroupDescribe's ``Assignment``) is one struct: one class, values of either field encode, and the stub
declares it once; a different struct under the same name is refused by the parser and by the stub generator."""

from __future__ import annotations

import pytest

from spark_kafkalog.protocol import stubs
from spark_kafkalog.protocol.codec import decode_with, encode_struct
from spark_kafkalog.protocol.primitives import Reader
from spark_kafkalog.protocol.schema import DeclarationError, VersionRange, declare_data, parse_struct

TWICE = """
    current                Assignment
      partitions           []int32
      owner                string?     default=null
    target                 Assignment
      partitions           []int32
      owner                string?     default=null
"""


def test_an_identical_struct_is_shared():
    spec = declare_data("Twice", versions="0", flexible="0+", fields=TWICE)
    current, target = spec.struct.fields
    assert current.struct is target.struct
    cls = spec.cls
    v = cls(current=cls.Assignment(partitions=[1]), target=cls.Assignment(partitions=[2, 3], owner="m"))
    wire = encode_struct(spec.struct, 0, True, v).getvalue()
    assert decode_with(spec.struct, 0, True, Reader(wire)) == v


@pytest.mark.parametrize(
    "second",
    [
        "      partitions           []int64\n      owner                string?     default=null\n",  # a type
        "      partitions           []int32\n",  # a field fewer
        "      partitions           []int32\n      owner                string      default=x\n",  # nullability
        "      partitions           []int32\n      owner                string?     v1+ default=null\n",  # versions
    ],
)
def test_a_different_struct_of_the_same_name_is_refused(second):
    text = "    current  Assignment\n      partitions []int32\n      owner string? default=null\n"
    text += "    target   Assignment\n" + second
    with pytest.raises(DeclarationError, match="struct Assignment unlike the one 'current' declares"):
        parse_struct(text, "Different", VersionRange(0, 1), flexible=VersionRange(0, 1))


def test_the_stub_declares_a_shared_struct_once_and_refuses_two_different_ones():
    spec = declare_data("Twice", versions="0", flexible="0+", fields=TWICE)
    text = stubs.render_data(spec)
    assert text.count("class Assignment(Message):") == 1
    assert "current: Assignment" in text and "target: Assignment" in text
    other = parse_struct("partitions []int32\n", "Assignment", VersionRange(0, 0))
    spec.struct.fields[1].struct = other  # what a parser without sharing would hand over
    with pytest.raises(ValueError, match="two nested structs named Assignment"):
        stubs.render_data(spec)
