/* Kafka's murmur2 (Java's org.apache.kafka.common.utils.Utils.murmur2), bit for bit: seed 0x9747b28c,
 * m 0x5bd1e995, r 24, little-endian 4-byte blocks, the tail mixed from its last byte down. The default
 * partition of a keyed record is (murmur2(key) & 0x7fffffff) % num_partitions (Utils.toPositive).
 * Reference: spark_kafkalog.records.murmur2. Shared by encode.c and producer.c. */
#ifndef KERNELS_MURMUR2_H
#define KERNELS_MURMUR2_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t kafka_murmur2(const uint8_t *k, size_t length) {
    const uint32_t m = 0x5bd1e995u;
    uint32_t h = 0x9747b28cu ^ (uint32_t)length;
    size_t blocks = length / 4;
    for (size_t j = 0; j < blocks; j++) {
        const uint8_t *b = k + 4 * j;
        uint32_t w = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
        w *= m;
        w ^= w >> 24;
        w *= m;
        h *= m;
        h ^= w;
    }
    const uint8_t *t = k + 4 * blocks;
    switch (length & 3) {
        case 3: h ^= (uint32_t)t[2] << 16; /* fall through */
        case 2: h ^= (uint32_t)t[1] << 8;  /* fall through */
        case 1:
            h ^= t[0];
            h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

/* The partition of a key among num_partitions (> 0). */
static inline int64_t kafka_key_partition(const uint8_t *k, size_t length, int64_t num_partitions) {
    return (int64_t)((kafka_murmur2(k, length) & 0x7fffffffu) % (uint64_t)num_partitions);
}

#endif
