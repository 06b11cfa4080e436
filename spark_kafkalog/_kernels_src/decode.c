/* Read side of record batch v2: the record walk of spark_kafkalog.datasource.arrow_decode, compiled.
 *
 * walk_records(data, section_starts, counts, fields) -> status
 *
 *   data            bytes-like: record sections (decompressed record data of v2 batches)
 *   section_starts  int64 buffer, k entries: where section i's first record starts in data
 *   counts          int64 buffer, k entries: records_count of section i (>= 1)
 *   fields          writable int64 buffer of WALK_FIELDS x n (n = sum of counts), row-major: row f holds
 *                   field f of every record, in record order:
 *
 *     | row | field          | meaning                                                       |
 *     |-----|----------------|---------------------------------------------------------------|
 *     | 0   | start          | position of the record's length varint                        |
 *     | 1   | length         | record length (zigzag varint; signed, as on the wire)         |
 *     | 2   | record_end     | body + length, body = position after the length varint        |
 *     | 3   | ts_delta       | timestamp delta (varlong)                                     |
 *     | 4   | offset_delta   | offset delta (varint)                                         |
 *     | 5   | key_begin      | position of the key bytes                                     |
 *     | 6   | key_length     | -1 for a null key                                             |
 *     | 7   | value_begin    | position after the key (key_begin + max(key_length, 0)) and   |
 *     |     |                | the value length varint                                       |
 *     | 8   | value_length   | -1 for a null value                                           |
 *     | 9   | header_count   | headers count varint                                          |
 *     | 10  | after          | position after the headers count varint                       |
 *
 * Records of a section follow each other by their length varint (next = body + length, or body + ~length
 * for a negative one), as the reference (arrow_decode.walk_records_numpy) does; record_end wraps around
 * int64 as numpy's does; the caller checks lengths, record ends and section ends. The attributes byte
 * after the length varint is skipped. Returns 0, WALK_TRUNCATED when a field lies beyond data (a field
 * position past int64 included), WALK_LONG_VARINT for a varint longer than 10 bytes.
 * Every read is bounds-checked against data. Stateless; the GIL is held throughout.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define WALK_FIELDS 11
#define WALK_TRUNCATED 1
#define WALK_LONG_VARINT 2

/* Zigzag varint at *pos; advances *pos. Returns 0 or a WALK_ status. */
static inline int read_varint(const uint8_t *buf, int64_t size, int64_t *pos, int64_t *value) {
    int64_t p = *pos;
    if (p < 0 || p >= size) return WALK_TRUNCATED;
    uint8_t b = buf[p++];
    uint64_t raw = b & 0x7F;
    if (b >= 0x80) {
        int shift = 7;
        for (;;) {
            if (shift > 63) return WALK_LONG_VARINT;
            if (p >= size) return WALK_TRUNCATED;
            b = buf[p++];
            raw |= (uint64_t)(b & 0x7F) << shift;
            if (b < 0x80) break;
            shift += 7;
        }
    }
    *value = (int64_t)((raw >> 1) ^ (~(raw & 1) + 1));
    *pos = p;
    return 0;
}

/* a + b, or WALK_TRUNCATED when it leaves int64 (then no valid position could follow). */
static inline int add_position(int64_t a, int64_t b, int64_t *out) {
    return __builtin_add_overflow(a, b, out) ? WALK_TRUNCATED : 0;
}

static int walk(const uint8_t *buf, int64_t size, const int64_t *section_starts, const int64_t *counts,
                Py_ssize_t sections, int64_t *fields, int64_t n) {
    int64_t r = 0;
    int status;
    for (Py_ssize_t s = 0; s < sections; s++) {
        int64_t pos = section_starts[s];
        for (int64_t k = 0; k < counts[s]; k++, r++) {
            int64_t length, body, p, ts, od, klen, vlen, hcount, magnitude;
            fields[r] = pos;
            p = pos;
            if ((status = read_varint(buf, size, &p, &length))) return status;
            body = p;
            fields[n + r] = length;
            fields[2 * n + r] = (int64_t)((uint64_t)body + (uint64_t)length);
            magnitude = length < 0 ? ~length : length;
            if (add_position(body, magnitude, &pos)) pos = INT64_MAX; /* the next read, if any, fails */
            p = body + 1; /* attributes */
            if ((status = read_varint(buf, size, &p, &ts))) return status;
            if ((status = read_varint(buf, size, &p, &od))) return status;
            if ((status = read_varint(buf, size, &p, &klen))) return status;
            fields[3 * n + r] = ts;
            fields[4 * n + r] = od;
            fields[5 * n + r] = p;
            fields[6 * n + r] = klen;
            if ((status = add_position(p, klen > 0 ? klen : 0, &p))) return status;
            if ((status = read_varint(buf, size, &p, &vlen))) return status;
            fields[7 * n + r] = p;
            fields[8 * n + r] = vlen;
            if ((status = add_position(p, vlen > 0 ? vlen : 0, &p))) return status;
            if ((status = read_varint(buf, size, &p, &hcount))) return status;
            fields[9 * n + r] = hcount;
            fields[10 * n + r] = p;
        }
    }
    return 0;
}

static int int64_buffer(PyObject *obj, Py_buffer *view, int writable, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0) return -1;
    if (view->len % 8) {
        PyErr_Format(PyExc_ValueError, "%s: expected an int64 buffer, got %zd bytes", name, view->len);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *walk_records(PyObject *self, PyObject *args) {
    PyObject *data_obj, *starts_obj, *counts_obj, *fields_obj;
    if (!PyArg_ParseTuple(args, "OOOO:walk_records", &data_obj, &starts_obj, &counts_obj, &fields_obj)) return NULL;
    Py_buffer data, starts, counts, fields;
    if (PyObject_GetBuffer(data_obj, &data, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (int64_buffer(starts_obj, &starts, 0, "section_starts") < 0) goto fail_data;
    if (int64_buffer(counts_obj, &counts, 0, "counts") < 0) goto fail_starts;
    if (int64_buffer(fields_obj, &fields, 1, "fields") < 0) goto fail_counts;
    Py_ssize_t sections = starts.len / 8;
    const int64_t *count = (const int64_t *)counts.buf;
    int64_t n = 0;
    int ok = counts.len == starts.len;
    for (Py_ssize_t s = 0; ok && s < sections; s++) {
        ok = count[s] >= 0 && !__builtin_add_overflow(n, count[s], &n);
    }
    if (!ok || fields.len / 8 != (Py_ssize_t)WALK_FIELDS * n) {
        PyErr_SetString(PyExc_ValueError,
                        "walk_records: counts must be >= 0, one per section start, and fields 11 x sum(counts)");
        PyBuffer_Release(&fields);
        goto fail_counts;
    }
    int status = walk((const uint8_t *)data.buf, data.len, (const int64_t *)starts.buf, count, sections,
                      (int64_t *)fields.buf, n);
    PyBuffer_Release(&fields);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&data);
    return PyLong_FromLong(status);
fail_counts:
    PyBuffer_Release(&counts);
fail_starts:
    PyBuffer_Release(&starts);
fail_data:
    PyBuffer_Release(&data);
    return NULL;
}

PyMethodDef kernels_decode_methods[] = {
    {"walk_records", walk_records, METH_VARARGS,
     "walk_records(data, section_starts, counts, fields) -> status: every record's start, length, record end, "
     "timestamp and offset deltas, key/value positions and lengths, header count and the position after it, "
     "into fields (int64, 11 x n); 0, 1 (truncated) or 2 (varint longer than 10 bytes)."},
    {NULL, NULL, 0, NULL},
};
