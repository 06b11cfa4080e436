/* Record batch v2 record encoding: the records section of a batch from column buffers.
 *
 * encode_records(rows, ts_deltas, values, keys, headers[, headroom]) -> bytearray
 *   rows       int64 buffer: the row indices to encode, in record order (offset delta = position)
 *   ts_deltas  int64 buffer aligned with rows (timestamp - base timestamp), or None for all 0
 *   values, keys, headers: None (keys: every key null; headers: no headers) or a tuple
 *              (offsets int64 buffer [n+1], data buffer, nulls uint8 buffer [n] or None) indexed by row;
 *              a header entry is the already-encoded headers section (count varint + headers).
 * Each record: varint length, attributes 0, varint timestamp delta, varint offset delta, varint key
 * length (-1 null) + key, varint value length (-1 null) + value, headers section (0x00 when none).
 * Same bytes as spark_kafkalog.records.batch_builder.RecordBatchBuilder.append. The result starts with
 * ``headroom`` zero bytes (room for the batch header, written in place by the caller).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "murmur2.h"

typedef struct {
    Py_buffer offsets, data, nulls;
    int present, has_nulls;
    const int64_t *off;
    const uint8_t *bytes;
    const uint8_t *null;
    Py_ssize_t n;
} column_t;

static void column_release(column_t *c) {
    if (c->present) {
        PyBuffer_Release(&c->offsets);
        PyBuffer_Release(&c->data);
        if (c->has_nulls) PyBuffer_Release(&c->nulls);
    }
    c->present = 0;
}

static int column_open(PyObject *obj, column_t *c, const char *name) {
    memset(c, 0, sizeof(*c));
    if (obj == Py_None) return 0;
    PyObject *o, *d, *nl;
    if (!PyArg_ParseTuple(obj, "OOO", &o, &d, &nl)) {
        PyErr_Format(PyExc_TypeError, "%s must be None or (offsets, data, nulls)", name);
        return -1;
    }
    if (PyObject_GetBuffer(o, &c->offsets, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(d, &c->data, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&c->offsets);
        return -1;
    }
    c->present = 1;
    if (nl != Py_None) {
        if (PyObject_GetBuffer(nl, &c->nulls, PyBUF_C_CONTIGUOUS) < 0) {
            PyBuffer_Release(&c->offsets);
            PyBuffer_Release(&c->data);
            c->present = 0;
            return -1;
        }
        c->has_nulls = 1;
        c->null = (const uint8_t *)c->nulls.buf;
    }
    if (c->offsets.len % 8 != 0 || c->offsets.len < 8) {
        PyErr_Format(PyExc_ValueError, "%s offsets must be int64 with at least one entry", name);
        column_release(c);
        return -1;
    }
    c->off = (const int64_t *)c->offsets.buf;
    c->bytes = (const uint8_t *)c->data.buf;
    c->n = c->offsets.len / 8 - 1;
    if (c->has_nulls && c->nulls.len < c->n) {
        PyErr_Format(PyExc_ValueError, "%s nulls shorter than its offsets", name);
        column_release(c);
        return -1;
    }
    return 0;
}

static inline int varint_size(int64_t v) {
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    int n = 1;
    while (z >= 0x80) {
        z >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *put_varint(uint8_t *p, int64_t v) {
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (z >= 0x80) {
        *p++ = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    *p++ = (uint8_t)z;
    return p;
}

/* Length of row r's field (-1 null), checking its offsets against the data; -2 on a bad offset. */
static inline int64_t field_len(const column_t *c, int64_t r) {
    if (c->has_nulls && c->null[r]) return -1;
    int64_t a = c->off[r], b = c->off[r + 1];
    if (a < 0 || b < a || b > c->data.len) return -2;
    return b - a;
}

static PyObject *encode_records(PyObject *self, PyObject *args) {
    PyObject *rows_obj, *ts_obj, *values_obj, *keys_obj, *headers_obj;
    Py_ssize_t headroom = 0;
    if (!PyArg_ParseTuple(args, "OOOOO|n", &rows_obj, &ts_obj, &values_obj, &keys_obj, &headers_obj, &headroom))
        return NULL;
    if (headroom < 0) {
        PyErr_SetString(PyExc_ValueError, "headroom must be >= 0");
        return NULL;
    }
    Py_buffer rows_buf, ts_buf;
    column_t values, keys, headers;
    int have_ts = 0;
    PyObject *result = NULL;
    memset(&values, 0, sizeof values);
    memset(&keys, 0, sizeof keys);
    memset(&headers, 0, sizeof headers);
    if (PyObject_GetBuffer(rows_obj, &rows_buf, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    Py_ssize_t count = rows_buf.len / 8;
    const int64_t *rows = (const int64_t *)rows_buf.buf;
    if (ts_obj != Py_None) {
        if (PyObject_GetBuffer(ts_obj, &ts_buf, PyBUF_C_CONTIGUOUS) < 0) goto done;
        have_ts = 1;
        if (ts_buf.len / 8 < count) {
            PyErr_SetString(PyExc_ValueError, "ts_deltas shorter than rows");
            goto done;
        }
    }
    const int64_t *ts = have_ts ? (const int64_t *)ts_buf.buf : NULL;
    if (values_obj == Py_None) {
        PyErr_SetString(PyExc_TypeError, "values must be (offsets, data, nulls)");
        goto done;
    }
    if (column_open(values_obj, &values, "values") < 0) goto done;
    if (column_open(keys_obj, &keys, "keys") < 0) goto done;
    if (column_open(headers_obj, &headers, "headers") < 0) goto done;

    /* pass 1: sizes and checks */
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t r = rows[i];
        if (r < 0 || r >= values.n || (keys.present && r >= keys.n) || (headers.present && r >= headers.n)) {
            PyErr_Format(PyExc_IndexError, "row %lld out of range", (long long)r);
            goto done;
        }
        int64_t vl = field_len(&values, r);
        int64_t kl = keys.present ? field_len(&keys, r) : -1;
        int64_t hl = headers.present ? field_len(&headers, r) : -1;
        if (vl == -2 || kl == -2 || hl == -2) {
            PyErr_Format(PyExc_ValueError, "row %lld has offsets outside its data", (long long)r);
            goto done;
        }
        int64_t body = 1 + varint_size(ts ? ts[i] : 0) + varint_size(i) + varint_size(kl) + (kl > 0 ? kl : 0) +
                       varint_size(vl) + (vl > 0 ? vl : 0) + (hl >= 1 ? hl : 1);
        total += varint_size(body) + body;
    }
    result = PyByteArray_FromStringAndSize(NULL, headroom + (Py_ssize_t)total);
    if (result == NULL) goto done;
    uint8_t *p = (uint8_t *)PyByteArray_AS_STRING(result);
    memset(p, 0, (size_t)headroom);
    p += headroom;

    /* pass 2: write */
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t r = rows[i];
        int64_t vl = field_len(&values, r);
        int64_t kl = keys.present ? field_len(&keys, r) : -1;
        int64_t hl = headers.present ? field_len(&headers, r) : -1;
        int64_t td = ts ? ts[i] : 0;
        int64_t body = 1 + varint_size(td) + varint_size(i) + varint_size(kl) + (kl > 0 ? kl : 0) + varint_size(vl) +
                       (vl > 0 ? vl : 0) + (hl >= 1 ? hl : 1);
        p = put_varint(p, body);
        *p++ = 0;
        p = put_varint(p, td);
        p = put_varint(p, i);
        p = put_varint(p, kl);
        if (kl > 0) {
            memcpy(p, keys.bytes + keys.off[r], (size_t)kl);
            p += kl;
        }
        p = put_varint(p, vl);
        if (vl > 0) {
            memcpy(p, values.bytes + values.off[r], (size_t)vl);
            p += vl;
        }
        if (hl >= 1) {
            memcpy(p, headers.bytes + headers.off[r], (size_t)hl);
            p += hl;
        } else {
            *p++ = 0;
        }
    }

done:
    column_release(&values);
    column_release(&keys);
    column_release(&headers);
    if (have_ts) PyBuffer_Release(&ts_buf);
    PyBuffer_Release(&rows_buf);
    return result;
}

/* murmur2_partitions(offsets int64 [n+1], data, num_partitions) -> bytes of n int32 (native order):
 * toPositive(murmur2(key)) % num_partitions per key, Java Utils.murmur2 bit for bit. */
static PyObject *murmur2_partitions(PyObject *self, PyObject *args) {
    PyObject *o, *d;
    long long num_partitions;
    if (!PyArg_ParseTuple(args, "OOL", &o, &d, &num_partitions)) return NULL;
    if (num_partitions <= 0) {
        PyErr_SetString(PyExc_ValueError, "num_partitions must be positive");
        return NULL;
    }
    Py_buffer ob, db;
    if (PyObject_GetBuffer(o, &ob, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(d, &db, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&ob);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = ob.len / 8 - 1;
    if (n < 0) n = 0;
    const int64_t *off = (const int64_t *)ob.buf;
    const uint8_t *data = (const uint8_t *)db.buf;
    result = PyBytes_FromStringAndSize(NULL, n * 4);
    if (result == NULL) goto out;
    int32_t *outp = (int32_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t a = off[i], b = off[i + 1];
        if (a < 0 || b < a || b > db.len) {
            Py_CLEAR(result);
            PyErr_Format(PyExc_ValueError, "key %zd has offsets outside its data", i);
            goto out;
        }
        outp[i] = (int32_t)kafka_key_partition(data + a, (size_t)(b - a), num_partitions);
    }
out:
    PyBuffer_Release(&ob);
    PyBuffer_Release(&db);
    return result;
}

PyMethodDef kernels_encode_methods[] = {
    {"encode_records", encode_records, METH_VARARGS,
     "encode_records(rows, ts_deltas, values, keys, headers[, headroom]) -> bytearray: the records section of a v2 "
     "batch after headroom zero bytes"},
    {"murmur2_partitions", murmur2_partitions, METH_VARARGS,
     "murmur2_partitions(offsets, data, num_partitions) -> bytes of int32: Kafka's default partition per key"},
    {NULL, NULL, 0, NULL},
};
