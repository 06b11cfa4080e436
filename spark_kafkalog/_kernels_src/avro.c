/* Avro binary payloads of one writer schema into Arrow column buffers: the compiled path of
 * spark_kafkalog.schemas.avro.columnar (which compiles the program and wraps the buffers into pyarrow arrays).
 *
 * avro_decode(program, columns, data, offsets, offset_width, validity, first, n, skip) -> (bad, buffers)
 *
 *   program       bytes of int32 ops, 4 int32 each, in pre-order of the schema (a record's fields follow it):
 *                 (opcode, column, argument, next) where next is the op index after the op's subtree
 *   columns       number of output columns (every op but AVRO_UNION_NULL writes one)
 *   data          bytes-like: the values of an Arrow binary array (its data buffer)
 *   offsets       its offsets buffer (int32 when offset_width is 4, int64 when 8), from the array's start
 *   validity      its validity bitmap or None; bit first + i tells whether value i is present
 *   first         the array's offset into offsets and validity (value i spans offsets[first + i] ..
 *                 offsets[first + i + 1])
 *   n             number of values
 *   skip          bytes before each payload (5: Confluent's wire-format prefix, checked by the caller)
 *
 * Arrays (AVRO_ARRAY) are read block by block (a negative count is followed by the block's byte size, which
 * is not needed) into int32 list offsets over their items' column; the arrays of one payload may hold at most
 * its size + 4096 items in all (so a forged count cannot make the loop run away; more items of no bytes, such
 * as nulls, are left to the Python path).
 * A null input value (or an AVRO_UNION_NULL op reading its null branch) appends a null to the column of the
 * node (a struct's children get an empty value each, as pyarrow builds them). Returns bad = -1 and, per
 * column, (validity bytes or None, null count, values bytes, data bytes or None, length): values are the
 * fixed-width values (bool: a bitmap; int32/int64/float/double: little-endian words) or the int32 offsets of
 * a binary column. bad = the index of the first payload that is truncated, has bytes after its datum, a
 * varint longer than 10 bytes or wider than its type, a negative or too large length, invalid UTF-8, an enum
 * or union index out of range, a date/timestamp outside Python's datetime, or a column beyond 2^31 - 1 bytes
 * (then buffers is None): the caller decodes with the Python path, which explains. Every read is bounds-
 * checked. The GIL is released while decoding (the buffers are only read; the caller holds them).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    AVRO_NULL = 0,
    AVRO_BOOLEAN = 1,
    AVRO_INT = 2,
    AVRO_LONG = 3,
    AVRO_FLOAT = 4,
    AVRO_DOUBLE = 5,
    AVRO_STRING = 6,
    AVRO_BYTES = 7,
    AVRO_FIXED = 8,      /* argument: size */
    AVRO_ENUM = 9,       /* argument: number of symbols; the column holds the symbol's index (int32) */
    AVRO_DATE = 10,      /* int days, within Python's date range */
    AVRO_TS_MILLIS = 11, /* long millis -> int64 micros, within Python's datetime range */
    AVRO_TS_MICROS = 12, /* long micros, within Python's datetime range */
    AVRO_RECORD = 13,    /* argument: number of fields (the ops that follow) */
    AVRO_UNION_NULL = 14, /* argument: the null branch's index (0 or 1); the other branch's op follows */
    AVRO_ARRAY = 15       /* int32 list offsets into the items' column; the items' op follows */
};



#define OP_WIDTH 4
#define MIN_DAYS (-719162LL)                 /* date(1, 1, 1) */
#define MAX_DAYS 2932896LL                   /* date(9999, 12, 31) */
#define MIN_MICROS (-62135596800000000LL)    /* datetime(1, 1, 1) */
#define MAX_MICROS 253402300799999999LL      /* datetime(9999, 12, 31, 23, 59, 59, 999999) */

typedef struct {
    uint8_t *buf;
    size_t len, cap;
} Growable;

typedef struct {
    Growable validity; /* one bit per value */
    Growable values;   /* fixed-width values, a bool bitmap, or the int32 offsets of binary */
    Growable data;     /* binary bytes */
    int64_t length, nulls;
} Column;

typedef struct {
    const int32_t *ops;
    int64_t nops;
    Column *cols;
    const uint8_t *p, *end; /* the payload being read */
    int64_t items_left;     /* array items the payload may still hold: its size + ITEMS_SLACK */
} Decoder;

#define ITEMS_SLACK 4096 /* array items of no bytes (nulls, empty records) a payload may hold beyond its size */

/* 0 ok, -1 out of memory or too large */
static int reserve(Growable *g, size_t extra) {
    if (g->cap - g->len >= extra) return 0;
    size_t cap = g->cap ? g->cap : 64;
    while (cap - g->len < extra) {
        if (cap > SIZE_MAX / 2) return -1;
        cap *= 2;
    }
    uint8_t *buf = realloc(g->buf, cap);
    if (buf == NULL) return -1;
    g->buf = buf;
    g->cap = cap;
    return 0;
}

static inline int append(Growable *g, const void *src, size_t len) {
    if (len == 0) return 0; /* g->buf may still be NULL: no memcpy from or to it */
    if (reserve(g, len)) return -1;
    memcpy(g->buf + g->len, src, len);
    g->len += len;
    return 0;
}

/* Bit number `index` of a bitmap growing one bit at a time. */
static inline int set_bit(Growable *g, int64_t index, int bit) {
    size_t byte = (size_t)(index >> 3);
    if (byte >= g->len) {
        if (reserve(g, 1)) return -1;
        g->buf[g->len++] = 0;
    }
    if (bit) g->buf[byte] |= (uint8_t)(1u << (index & 7));
    return 0;
}

static inline int push_valid(Column *c, int valid) {
    if (set_bit(&c->validity, c->length, valid)) return -1;
    if (!valid) c->nulls++;
    c->length++;
    return 0;
}

/* The int32 offset after the binary column's bytes; -1 past 2^31 - 1. */
static inline int push_offset(Column *c) {
    if (c->data.len > INT32_MAX) return -1;
    int32_t end = (int32_t)c->data.len;
    return append(&c->values, &end, 4);
}

/* Zigzag varint of at most 10 bytes whose value fits 64 bits; -1 otherwise. */
static inline int read_long(Decoder *d, int64_t *out) {
    uint64_t raw = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (d->p >= d->end) return -1;
        uint8_t b = *d->p++;
        if (shift == 63 && (b & 0x7E)) return -1;
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = (int64_t)((raw >> 1) ^ (~(raw & 1) + 1));
            return 0;
        }
    }
    return -1;
}

/* Strict UTF-8 (as Python's decoder: no overlong forms, no surrogates, at most U+10FFFF). */
static int valid_utf8(const uint8_t *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        if (len - i >= 8) { /* 8 ASCII bytes at a time */
            uint64_t word;
            memcpy(&word, s + i, 8);
            if (!(word & 0x8080808080808080ULL)) {
                i += 8;
                continue;
            }
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            return 0;
        }
        if (len - i - 1 < need) return 0;
        if (s[i + 1] < lo || s[i + 1] > hi) return 0;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80) return 0;
        i += need + 1;
    }
    return 1;
}

/* The column of the node at op `pc` (a nullable union's is its branch's). */
static inline Column *node_column(Decoder *d, int64_t pc) {
    while (d->ops[pc * OP_WIDTH] == AVRO_UNION_NULL) pc++;
    return &d->cols[d->ops[pc * OP_WIDTH + 1]];
}

/* The list offset after the items so far of the array at op `pc`; -1 past 2^31 - 1 items. */
static inline int list_offset(Decoder *d, int64_t pc) {
    int64_t items = node_column(d, pc + 1)->length;
    if (items > INT32_MAX) return -1;
    int32_t end = (int32_t)items;
    return append(&d->cols[d->ops[pc * OP_WIDTH + 1]].values, &end, 4);
}

/* A null (or, for a child of a null struct, an empty value) appended to the node at op `pc`. */
static int append_empty(Decoder *d, int64_t pc, int valid) {
    const int32_t *op = d->ops + pc * OP_WIDTH;
    if (op[0] == AVRO_UNION_NULL) return append_empty(d, pc + 1, valid);
    Column *c = &d->cols[op[1]];
    if (push_valid(c, valid)) return -1;
    static const uint8_t zeros[8] = {0};
    switch (op[0]) {
        case AVRO_NULL:
            return 0;
        case AVRO_BOOLEAN:
            return set_bit(&c->values, c->length - 1, 0);
        case AVRO_INT:
        case AVRO_FLOAT:
        case AVRO_DATE:
        case AVRO_ENUM:
            return append(&c->values, zeros, 4);
        case AVRO_LONG:
        case AVRO_DOUBLE:
        case AVRO_TS_MILLIS:
        case AVRO_TS_MICROS:
            return append(&c->values, zeros, 8);
        case AVRO_STRING:
        case AVRO_BYTES:
        case AVRO_FIXED:
            return push_offset(c);
        case AVRO_RECORD: {
            int64_t child = pc + 1;
            for (int32_t f = 0; f < op[2]; f++) {
                if (append_empty(d, child, 1)) return -1;
                child = d->ops[child * OP_WIDTH + 3];
            }
            return 0;
        }
        case AVRO_ARRAY:
            return list_offset(d, pc);
    }
    return -1;
}

/* Status of decode_node: 0 ok, 1 bad payload, -1 out of memory. */
static int decode_node(Decoder *d, int64_t pc) {
    const int32_t *op = d->ops + pc * OP_WIDTH;
    int64_t v;
    if (op[0] == AVRO_UNION_NULL) {
        if (read_long(d, &v) || v < 0 || v > 1) return 1;
        if (v == op[2]) return append_empty(d, pc + 1, 0) ? -1 : 0;
        return decode_node(d, pc + 1);
    }
    Column *c = &d->cols[op[1]];
    switch (op[0]) {
        case AVRO_NULL:
            return push_valid(c, 1) ? -1 : 0;
        case AVRO_BOOLEAN: {
            if (d->p >= d->end) return 1;
            int bit = *d->p++ != 0;
            if (push_valid(c, 1)) return -1;
            return set_bit(&c->values, c->length - 1, bit) ? -1 : 0;
        }
        case AVRO_INT:
        case AVRO_DATE:
        case AVRO_ENUM: {
            if (read_long(d, &v)) return 1;
            if (op[0] == AVRO_INT && (v < INT32_MIN || v > INT32_MAX)) return 1;
            if (op[0] == AVRO_DATE && (v < MIN_DAYS || v > MAX_DAYS)) return 1;
            if (op[0] == AVRO_ENUM && (v < 0 || v >= op[2])) return 1;
            int32_t w = (int32_t)v;
            if (push_valid(c, 1)) return -1;
            return append(&c->values, &w, 4) ? -1 : 0;
        }
        case AVRO_LONG:
        case AVRO_TS_MILLIS:
        case AVRO_TS_MICROS: {
            if (read_long(d, &v)) return 1;
            if (op[0] == AVRO_TS_MILLIS) {
                if (v < MIN_MICROS / 1000 || v > MAX_MICROS / 1000) return 1;
                v *= 1000;
            } else if (op[0] == AVRO_TS_MICROS && (v < MIN_MICROS || v > MAX_MICROS)) {
                return 1;
            }
            if (push_valid(c, 1)) return -1;
            return append(&c->values, &v, 8) ? -1 : 0;
        }
        case AVRO_FLOAT:
        case AVRO_DOUBLE: {
            size_t width = op[0] == AVRO_FLOAT ? 4 : 8;
            if ((size_t)(d->end - d->p) < width) return 1;
            if (push_valid(c, 1) || append(&c->values, d->p, width)) return -1;
            d->p += width;
            return 0;
        }
        case AVRO_STRING:
        case AVRO_BYTES:
        case AVRO_FIXED: {
            if (op[0] == AVRO_FIXED) {
                v = op[2];
            } else if (read_long(d, &v) || v < 0) {
                return 1;
            }
            if ((uint64_t)v > (uint64_t)(d->end - d->p)) return 1;
            if (op[0] == AVRO_STRING && !valid_utf8(d->p, (size_t)v)) return 1;
            if (c->data.len + (uint64_t)v > INT32_MAX) return 1;
            if (push_valid(c, 1) || append(&c->data, d->p, (size_t)v) || push_offset(c)) return -1;
            d->p += v;
            return 0;
        }
        case AVRO_RECORD: {
            if (push_valid(c, 1)) return -1;
            int64_t child = pc + 1;
            for (int32_t f = 0; f < op[2]; f++) {
                int status = decode_node(d, child);
                if (status) return status;
                child = d->ops[child * OP_WIDTH + 3];
            }
            return 0;
        }
        case AVRO_ARRAY: {
            /* blocks of items: a count (negative: its magnitude, then the block's byte size), 0 ends */
            for (;;) {
                if (read_long(d, &v)) return 1;
                if (v == 0) break;
                if (v < 0) {
                    int64_t size;
                    if (v == INT64_MIN || read_long(d, &size) || size < 0) return 1;
                    v = -v;
                }
                if (v > d->items_left) return 1; /* a forged count: the Python path explains */
                d->items_left -= v;
                for (int64_t k = 0; k < v; k++) {
                    int status = decode_node(d, pc + 1);
                    if (status) return status;
                }
                if (node_column(d, pc + 1)->length > INT32_MAX) return 1;
            }
            if (push_valid(c, 1)) return -1;
            return list_offset(d, pc) ? -1 : 0;
        }
    }
    return 1;
}

static void free_columns(Column *cols, Py_ssize_t count) {
    if (cols == NULL) return;
    for (Py_ssize_t i = 0; i < count; i++) {
        free(cols[i].validity.buf);
        free(cols[i].values.buf);
        free(cols[i].data.buf);
    }
    PyMem_Free(cols);
}

static PyObject *bytes_of(const Growable *g) { return PyBytes_FromStringAndSize((const char *)g->buf, (Py_ssize_t)g->len); }

/* The program's ops checked: opcodes and columns in range, every subtree ends within the program. */
static int check_program(const int32_t *ops, int64_t nops, Py_ssize_t ncols) {
    for (int64_t i = 0; i < nops; i++) {
        const int32_t *op = ops + i * OP_WIDTH;
        if (op[0] < AVRO_NULL || op[0] > AVRO_ARRAY || op[3] <= i || op[3] > nops) return -1;
        if (op[0] == AVRO_ARRAY && i + 1 >= nops) return -1;
        if (op[0] != AVRO_UNION_NULL && (op[1] < 0 || op[1] >= ncols)) return -1;
        if ((op[0] == AVRO_FIXED || op[0] == AVRO_ENUM || op[0] == AVRO_RECORD) && op[2] < 0) return -1;
        if (op[0] == AVRO_UNION_NULL && (op[2] < 0 || op[2] > 1 || i + 1 >= nops)) return -1;
    }
    return nops > 0 && ops[3] == nops ? 0 : -1;
}

static PyObject *avro_decode(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *program_obj, *data_obj, *offsets_obj, *validity_obj, *result = NULL;
    Py_ssize_t ncols, first, n, skip;
    int width;
    if (!PyArg_ParseTuple(args, "OnOOiOnnn:avro_decode", &program_obj, &ncols, &data_obj, &offsets_obj, &width,
                          &validity_obj, &first, &n, &skip))
        return NULL;
    if (ncols < 1 || first < 0 || n < 0 || skip < 0 || (width != 4 && width != 8)) {
        PyErr_SetString(PyExc_ValueError, "avro_decode: bad columns, first, n, skip or offset width");
        return NULL;
    }
    Py_buffer program, data, offsets, validity = {0};
    int have_validity = validity_obj != Py_None;
    if (PyObject_GetBuffer(program_obj, &program, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(data_obj, &data, PyBUF_C_CONTIGUOUS) < 0) goto release_program;
    if (PyObject_GetBuffer(offsets_obj, &offsets, PyBUF_C_CONTIGUOUS) < 0) goto release_data;
    if (have_validity && PyObject_GetBuffer(validity_obj, &validity, PyBUF_C_CONTIGUOUS) < 0) goto release_offsets;
    int64_t nops = program.len / (4 * OP_WIDTH);
    if (program.len % (4 * OP_WIDTH) || check_program((const int32_t *)program.buf, nops, ncols)) {
        PyErr_SetString(PyExc_ValueError, "avro_decode: malformed program");
        goto release_validity;
    }
    if ((first + n + 1) > offsets.len / width || (have_validity && (first + n + 7) / 8 > validity.len)) {
        PyErr_SetString(PyExc_ValueError, "avro_decode: offsets or validity shorter than the values");
        goto release_validity;
    }
    Column *cols = PyMem_Calloc((size_t)ncols, sizeof(Column));
    if (cols == NULL) {
        PyErr_NoMemory();
        goto release_validity;
    }
    Decoder d = {(const int32_t *)program.buf, nops, cols, NULL, NULL, 0};
    for (int64_t i = 0; i < nops; i++) { /* a binary column's offsets start with 0 */
        const int32_t *op = d.ops + i * OP_WIDTH;
        if ((op[0] == AVRO_STRING || op[0] == AVRO_BYTES || op[0] == AVRO_FIXED || op[0] == AVRO_ARRAY) &&
            cols[op[1]].values.len == 0 &&
            push_offset(&cols[op[1]])) {
            PyErr_NoMemory();
            goto release_cols;
        }
    }
    const uint8_t *base = (const uint8_t *)data.buf, *bits = (const uint8_t *)validity.buf;
    int64_t bad = -1;
    int status = 0;
    Py_BEGIN_ALLOW_THREADS;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = first + i, start, stop;
        if (have_validity && !(bits[at >> 3] & (1u << (at & 7)))) {
            if (append_empty(&d, 0, 0)) {
                status = -1;
                break;
            }
            continue;
        }
        if (width == 4) {
            start = ((const int32_t *)offsets.buf)[at];
            stop = ((const int32_t *)offsets.buf)[at + 1];
        } else {
            start = ((const int64_t *)offsets.buf)[at];
            stop = ((const int64_t *)offsets.buf)[at + 1];
        }
        if (start < 0 || stop > data.len || stop - start < skip) {
            bad = i;
            break;
        }
        d.p = base + start + skip;
        d.end = base + stop;
        d.items_left = stop - start + ITEMS_SLACK;
        status = decode_node(&d, 0);
        if (status == 0 && d.p != d.end) status = 1;
        if (status) {
            if (status == 1) bad = i;
            break;
        }
    }
    Py_END_ALLOW_THREADS;
    if (status == -1) {
        PyErr_NoMemory();
        goto release_cols;
    }
    if (bad >= 0) {
        result = Py_BuildValue("(LO)", (long long)bad, Py_None);
        goto release_cols;
    }
    PyObject *list = PyList_New(ncols);
    if (list == NULL) goto release_cols;
    for (Py_ssize_t k = 0; k < ncols; k++) {
        Column *c = &cols[k];
        PyObject *item = Py_BuildValue("(NLNNL)", c->nulls ? bytes_of(&c->validity) : (Py_INCREF(Py_None), Py_None),
                             (long long)c->nulls, bytes_of(&c->values), bytes_of(&c->data), (long long)c->length);
        if (item == NULL) {
            Py_DECREF(list);
            goto release_cols;
        }
        PyList_SET_ITEM(list, k, item);
    }
    result = Py_BuildValue("(iN)", -1, list);
release_cols:
    free_columns(cols, ncols);
release_validity:
    if (have_validity) PyBuffer_Release(&validity);
release_offsets:
    PyBuffer_Release(&offsets);
release_data:
    PyBuffer_Release(&data);
release_program:
    PyBuffer_Release(&program);
    return result;
}

PyMethodDef kernels_avro_methods[] = {
    {"avro_decode", avro_decode, METH_VARARGS,
     "avro_decode(program, columns, data, offsets, offset_width, validity, first, n, skip) -> (bad, buffers): "
     "Avro payloads of one writer schema into column buffers (see _kernels_src/avro.c); bad = -1 or the index "
     "of the first payload the compiled path does not decode."},
    {NULL, NULL, 0, NULL},
};
