"""Requests with bytes after their body decode as Kafka's brokers decode them: the extra bytes are ignored."""

from __future__ import annotations

from spark_kafkalog.protocol import decode_request

# librdkafka 2.x's AlterUserScramCredentials v0 (captured from confluent-kafka 2.16 against kafkalog): user "al",
# SCRAM-SHA-256, 4096 iterations, salt "salt", then the upsertion's and the request's empty tagged fields and one
# more 0 byte.
LIBRDKAFKA_ALTER_USER_SCRAM_CREDENTIALS = bytes.fromhex(
    "0033000000000003000772646b61666b6100010203616c01000010000573616c74215131450a01e6fdc6de870d65ce2c4cc42085230b"
    "bfdc630b0e42d25c429d0609000000"
)


def test_librdkafka_alter_user_scram_credentials_with_one_byte_too_many_decodes():
    request = decode_request(LIBRDKAFKA_ALTER_USER_SCRAM_CREDENTIALS)
    (upsertion,) = request.body.upsertions
    assert (upsertion.name, upsertion.mechanism, upsertion.iterations, upsertion.salt) == ("al", 1, 4096, b"salt")
    assert len(upsertion.salted_password) == 32
    assert request.body.deletions == []
