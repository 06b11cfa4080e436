/* Read side of record batch v2: the record walk of spark_kafkalog.datasource.arrow_decode, compiled.
 *
 * walk_records(data, section_starts, counts, fields) -> status
 *
 *   data            bytes-like: record sections (decompressed record data of v2 batches), or a list
 *                   (tuple) of k bytes-likes, one per section; positions are within a section's buffer
 *   section_starts  int64 buffer, k entries: where section i's first record starts in its buffer
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
 *
 * gather_binary (below) copies key or value bytes into one Arrow binary column.
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

/* The records of one section, from pos; writes rows r .. r + count - 1 of fields. */
static int walk_section(const uint8_t *buf, int64_t size, int64_t pos, int64_t count, int64_t r, int64_t *fields,
                        int64_t n) {
    int status;
    for (int64_t k = 0; k < count; k++, r++) {
        int64_t length, body, p, ts, od, klen, vlen, hcount, magnitude;
        fields[r] = pos;
        p = pos;
        if ((status = read_varint(buf, size, &p, &length))) return status;
        body = p;
        fields[n + r] = length;
        fields[2 * n + r] = (int64_t)((uint64_t)body + (uint64_t)length);
        magnitude = length < 0 ? ~length : length;
        if (add_position(body, magnitude, &pos)) pos = INT64_MAX; /* the next read, if any, fails */
        p = body + 1;                                             /* attributes */
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
    return 0;
}

/* The record data: one buffer for every section, or a list/tuple of one buffer per section. */
typedef struct {
    Py_buffer *views;
    Py_ssize_t count;
} Sources;

static void release_sources(Sources *sources) {
    for (Py_ssize_t i = 0; i < sources->count; i++) PyBuffer_Release(&sources->views[i]);
    PyMem_Free(sources->views);
    sources->views = NULL;
    sources->count = 0;
}

static int get_sources(PyObject *obj, Py_ssize_t sections, Sources *sources) {
    int many = PyList_Check(obj) || PyTuple_Check(obj);
    Py_ssize_t count = many ? PySequence_Fast_GET_SIZE(obj) : 1;
    sources->count = 0;
    if (many && count != sections) {
        PyErr_Format(PyExc_ValueError, "%zd buffers for %zd sections", count, sections);
        return -1;
    }
    sources->views = PyMem_Calloc(count ? count : 1, sizeof(Py_buffer));
    if (sources->views == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = many ? PySequence_Fast_ITEMS(obj)[i] : obj;
        if (PyObject_GetBuffer(item, &sources->views[i], PyBUF_C_CONTIGUOUS) < 0) {
            release_sources(sources);
            return -1;
        }
        sources->count = i + 1;
    }
    return 0;
}

static inline Py_buffer *source_of(Sources *sources, Py_ssize_t section) {
    return &sources->views[sources->count == 1 ? 0 : section];
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

/* Sum of counts (each >= 0), or -1 with ValueError. */
static int64_t total_count(const int64_t *count, Py_ssize_t sections) {
    int64_t n = 0;
    for (Py_ssize_t s = 0; s < sections; s++) {
        if (count[s] < 0 || __builtin_add_overflow(n, count[s], &n)) {
            PyErr_SetString(PyExc_ValueError, "counts must be >= 0");
            return -1;
        }
    }
    return n;
}

static PyObject *walk_records(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *data_obj, *starts_obj, *counts_obj, *fields_obj, *result = NULL;
    if (!PyArg_ParseTuple(args, "OOOO:walk_records", &data_obj, &starts_obj, &counts_obj, &fields_obj)) return NULL;
    Py_buffer starts, counts, fields;
    Sources sources = {NULL, 0};
    if (int64_buffer(starts_obj, &starts, 0, "section_starts") < 0) return NULL;
    if (int64_buffer(counts_obj, &counts, 0, "counts") < 0) goto release_starts;
    if (int64_buffer(fields_obj, &fields, 1, "fields") < 0) goto release_counts;
    Py_ssize_t sections = starts.len / 8;
    const int64_t *count = (const int64_t *)counts.buf;
    const int64_t *start = (const int64_t *)starts.buf;
    if (counts.len != starts.len) {
        PyErr_SetString(PyExc_ValueError, "walk_records: one count per section start");
        goto release_fields;
    }
    int64_t n = total_count(count, sections);
    if (n < 0) goto release_fields;
    if (fields.len / 8 != (Py_ssize_t)WALK_FIELDS * n) {
        PyErr_SetString(PyExc_ValueError, "walk_records: fields must be 11 x sum(counts)");
        goto release_fields;
    }
    if (get_sources(data_obj, sections, &sources) < 0) goto release_fields;
    int status = 0;
    for (Py_ssize_t s = 0, r = 0; s < sections && !status; r += count[s], s++) {
        Py_buffer *data = source_of(&sources, s);
        status = walk_section((const uint8_t *)data->buf, data->len, start[s], count[s], r, (int64_t *)fields.buf, n);
    }
    release_sources(&sources);
    result = PyLong_FromLong(status);
release_fields:
    PyBuffer_Release(&fields);
release_counts:
    PyBuffer_Release(&counts);
release_starts:
    PyBuffer_Release(&starts);
    return result;
}

/* gather_binary(data, counts, begin, length, offsets, out): the bytes [begin, begin + length) of every
 * record back to back into out (nothing for a negative length; out must hold exactly their sum), and
 * their Arrow offsets into offsets (int32, n + 1). data as for walk_records; counts: records of each
 * section in begin/length, in order. ValueError for a segment outside its buffer, more than 2^31 - 1
 * bytes in all or an out of another size. */
static PyObject *gather_binary(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *data_obj, *counts_obj, *begin_obj, *length_obj, *offsets_obj, *out_obj, *result = NULL;
    if (!PyArg_ParseTuple(args, "OOOOOO:gather_binary", &data_obj, &counts_obj, &begin_obj, &length_obj,
                          &offsets_obj, &out_obj))
        return NULL;
    Py_buffer counts, begin, length, offsets, out;
    Sources sources = {NULL, 0};
    if (int64_buffer(counts_obj, &counts, 0, "counts") < 0) return NULL;
    if (int64_buffer(begin_obj, &begin, 0, "begin") < 0) goto release_counts;
    if (int64_buffer(length_obj, &length, 0, "length") < 0) goto release_begin;
    if (PyObject_GetBuffer(offsets_obj, &offsets, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) goto release_length;
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) goto release_offsets;
    Py_ssize_t sections = counts.len / 8;
    const int64_t *count = (const int64_t *)counts.buf, *b = (const int64_t *)begin.buf;
    const int64_t *len = (const int64_t *)length.buf;
    int32_t *off = (int32_t *)offsets.buf;
    int64_t n = total_count(count, sections);
    if (n < 0) goto release_out;
    if (begin.len != n * 8 || length.len != n * 8 || offsets.len != (n + 1) * 4) {
        PyErr_SetString(PyExc_ValueError, "gather_binary: begin and length need sum(counts) entries, offsets one more");
        goto release_out;
    }
    if (get_sources(data_obj, sections, &sources) < 0) goto release_out;
    int64_t total = 0;
    off[0] = 0;
    for (Py_ssize_t s = 0, r = 0; s < sections; s++) {
        int64_t size = source_of(&sources, s)->len;
        for (int64_t end = r + count[s]; r < end; r++) {
            int64_t l = len[r] > 0 ? len[r] : 0;
            if (b[r] < 0 || b[r] > size || l > size - b[r]) {
                PyErr_Format(PyExc_ValueError, "gather_binary: segment %lld of %lld bytes at %lld is outside its buffer",
                             (long long)r, (long long)l, (long long)b[r]);
                goto release_all;
            }
            total += l;
            if (total > INT32_MAX) {
                PyErr_SetString(PyExc_ValueError, "gather_binary: more than 2^31 - 1 bytes for one Arrow binary column");
                goto release_all;
            }
            off[r + 1] = (int32_t)total;
        }
    }
    if (total != out.len) {
        PyErr_Format(PyExc_ValueError, "gather_binary: %lld bytes to gather into a buffer of %zd", (long long)total,
                     out.len);
        goto release_all;
    }
    char *dest = (char *)out.buf;
    for (Py_ssize_t s = 0, r = 0; s < sections; s++) {
        const char *buf = (const char *)source_of(&sources, s)->buf;
        for (int64_t end = r + count[s]; r < end; r++) {
            if (len[r] > 0) memcpy(dest + off[r], buf + b[r], (size_t)len[r]);
        }
    }
    Py_INCREF(Py_None);
    result = Py_None;
release_all:
    release_sources(&sources);
release_out:
    PyBuffer_Release(&out);
release_offsets:
    PyBuffer_Release(&offsets);
release_length:
    PyBuffer_Release(&length);
release_begin:
    PyBuffer_Release(&begin);
release_counts:
    PyBuffer_Release(&counts);
    return result;
}

PyMethodDef kernels_decode_methods[] = {
    {"walk_records", walk_records, METH_VARARGS,
     "walk_records(data, section_starts, counts, fields) -> status: every record's start, length, record end, "
     "timestamp and offset deltas, key/value positions and lengths, header count and the position after it, "
     "into fields (int64, 11 x n); 0, 1 (truncated) or 2 (varint longer than 10 bytes)."},
    {"gather_binary", gather_binary, METH_VARARGS,
     "gather_binary(data, counts, begin, length, offsets, out): the segments back to back into out (none for "
     "a negative length), their Arrow offsets into offsets (int32, n + 1)."},
    {NULL, NULL, 0, NULL},
};
