/* The per-record producer's compiled kernels (Producer.send and its drain-time batch encoding).
 *
 * key_partition(key, num_partitions) -> int
 *   Kafka's default partition of one keyed record: toPositive(murmur2(key)) % num_partitions, Java's
 *   Utils.murmur2 bit for bit (seed 0x9747b28c, m 0x5bd1e995, r 24, little-endian blocks, the tail from
 *   its last byte down). Reference: spark_kafkalog.records.murmur2.default_partition.
 *
 * encode_record_tuples(records, base_timestamp, header_room=0) -> (bytearray, max_timestamp) | None
 *   max_timestamp: the largest record timestamp (base_timestamp when there are no records);
 *   bytearray: `header_room` zero bytes (room for the batch header, written in place by the caller), then the
 *   records section of a v2 batch holding `records`, a list of (timestamp_ms, key, value, headers)
 *   tuples, offset deltas 0..n-1, timestamp deltas from base_timestamp (wrapped to int64 as Java's long).
 *   key/value: bytes or None; headers: an empty sequence or a list/tuple of (str, bytes | None) pairs.
 *   Each record: varint length, attributes 0, varlong timestamp delta, varint offset delta, varint key
 *   length (-1 null) + key, varint value length (-1 null) + value, varint header count, then per header
 *   varint key length + UTF-8 key, varint value length (-1 null) + value.
 *   Returns None (no error set) for anything else - other bytes-like types, a timestamp outside int64,
 *   a malformed header - and the caller uses the pure-Python reference, which handles or rejects it:
 *   spark_kafkalog.records.batch_builder._encode_record_tuples_py (the same bytes).
 *
 * append_record(queue, batch_size, size, timestamp, key, value, headers, callback, future_type, wakeup)
 *     -> future | None
 *   Producer.send's append to a partition's open batch, the last ProducerBatch of `queue` (a deque, or
 *   None): when that batch is `appendable` and its `estimated_size` plus `size` stays within
 *   `batch_size`, appends (timestamp, key, value, headers) to its `records`, (index, timestamp,
 *   callback) to its `callbacks` when `callback` is not None, adds `size` to `estimated_size`, and
 *   returns future_type((batch, index, timestamp)) (future_type: a tuple subclass); a batch that reaches
 *   `batch_size` is marked `full` and no longer `appendable`, and `wakeup()` is called. Returns None -
 *   marking the batch full when the record does not fit - for the caller's slow path. It runs no
 *   Python code before its decision is made and the record appended, so under the GIL it is atomic
 *   with respect to every other thread: the accumulator needs no lock around it, as long as batches
 *   leave the queue before they stop being appendable (see client.producer.accumulator). Reference:
 *   ProducerBatch.try_append under the accumulator's lock.
 *
 * make_send(context) -> send
 *   Producer.send compiled for its common case - send(topic, value, key) by position, a bytes key, a
 *   bytes or None value, the default serializers and partitioner, a topic whose cached partition state
 *   is current, a partition whose open batch takes the record - and handing every other call, unchanged,
 *   to the Python send in the context (which also takes over when the append finds no room). The same
 *   steps as client.producer.send_path's Python send: the closed/failed check, the topic state, murmur2, the size
 *   check, the timestamp (time.time_ns's clock), append_record.
 *
 * topic_state_layout() -> dict
 *   The indices of a topic's state (the list make_send's context maps each topic to) that make_send reads,
 *   by the names client.producer.send_path gives them (TOPIC_*): the test of the two agreeing.
 *
 * They hold the GIL throughout and keep no state but interned attribute names.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "murmur2.h"

static inline uint64_t zigzag(int64_t n) { return ((uint64_t)n << 1) ^ (uint64_t)(n >> 63); }

static inline Py_ssize_t zz_size(int64_t n) {
    uint64_t v = zigzag(n);
    Py_ssize_t size = 1;
    while (v > 0x7f) {
        v >>= 7;
        size++;
    }
    return size;
}

static inline uint8_t *put_zz(uint8_t *p, int64_t n) {
    uint64_t v = zigzag(n);
    while (v > 0x7f) {
        *p++ = (uint8_t)((v & 0x7f) | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* toPositive(murmur2(key)) % num_partitions, as Java's Utils.murmur2 (murmur2.h) */
static long long murmur2_partition(const uint8_t *k, Py_ssize_t length, long long num_partitions) {
    return (long long)kafka_key_partition(k, (size_t)length, (int64_t)num_partitions);
}

static PyObject *key_partition(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "key_partition(key, num_partitions) takes 2 arguments");
        return NULL;
    }
    long long num_partitions = PyLong_AsLongLong(args[1]);
    if (num_partitions == -1 && PyErr_Occurred()) return NULL;
    if (num_partitions <= 0) {
        PyErr_Format(PyExc_ValueError, "num_partitions must be positive, not %lld", num_partitions);
        return NULL;
    }
    Py_buffer view;
    const uint8_t *k;
    Py_ssize_t length;
    int release = 0;
    if (PyBytes_CheckExact(args[0])) {
        k = (const uint8_t *)PyBytes_AS_STRING(args[0]);
        length = PyBytes_GET_SIZE(args[0]);
    } else {
        if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
        k = (const uint8_t *)view.buf;
        length = view.len;
        release = 1;
    }
    long long partition = murmur2_partition(k, length, num_partitions);
    if (release) PyBuffer_Release(&view);
    return PyLong_FromLongLong(partition);
}

/* Size of a field (bytes or None): -1 for null, -2 for anything else. */
static inline Py_ssize_t field_len(PyObject *o) {
    if (o == Py_None) return -1;
    if (PyBytes_CheckExact(o)) return PyBytes_GET_SIZE(o);
    return -2;
}

/* The headers section's size (count varint included), or -1 when the headers need the Python path. */
static Py_ssize_t headers_size(PyObject *headers) {
    if (!PyList_CheckExact(headers) && !PyTuple_CheckExact(headers)) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(headers);
    Py_ssize_t size = zz_size(n);
    PyObject **items = PySequence_Fast_ITEMS(headers);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = items[i];
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) return -1;
        PyObject *hk = PyTuple_GET_ITEM(pair, 0);
        if (!PyUnicode_CheckExact(hk)) return -1;
        Py_ssize_t kl;
        if (PyUnicode_AsUTF8AndSize(hk, &kl) == NULL) {
            PyErr_Clear();
            return -1;
        }
        Py_ssize_t vl = field_len(PyTuple_GET_ITEM(pair, 1));
        if (vl == -2) return -1;
        size += zz_size(kl) + kl + zz_size(vl) + (vl > 0 ? vl : 0);
    }
    return size;
}

static uint8_t *put_headers(uint8_t *p, PyObject *headers) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(headers);
    PyObject **items = PySequence_Fast_ITEMS(headers);
    p = put_zz(p, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = items[i];
        Py_ssize_t kl;
        const char *key = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(pair, 0), &kl); /* cached: checked above */
        p = put_zz(p, kl);
        memcpy(p, key, (size_t)kl);
        p += kl;
        PyObject *v = PyTuple_GET_ITEM(pair, 1);
        if (v == Py_None) {
            p = put_zz(p, -1);
        } else {
            Py_ssize_t vl = PyBytes_GET_SIZE(v);
            p = put_zz(p, vl);
            memcpy(p, PyBytes_AS_STRING(v), (size_t)vl);
            p += vl;
        }
    }
    return p;
}

/* Reads record i's fields; 0 on success, 1 when it needs the Python path. */
static int record_fields(PyObject *record, int64_t base, int64_t *delta, PyObject **key, PyObject **value,
                         PyObject **headers, long long *max_ts) {
    if (!PyTuple_CheckExact(record) || PyTuple_GET_SIZE(record) != 4) return 1;
    int overflow = 0;
    long long ts = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(record, 0), &overflow);
    if (overflow || (ts == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 1;
    }
    *delta = (int64_t)((uint64_t)ts - (uint64_t)base);
    if (ts > *max_ts) *max_ts = ts;
    *key = PyTuple_GET_ITEM(record, 1);
    *value = PyTuple_GET_ITEM(record, 2);
    *headers = PyTuple_GET_ITEM(record, 3);
    return 0;
}

typedef struct {
    const char *key;
    Py_ssize_t key_len; /* -1: null */
    const char *value;
    Py_ssize_t value_len; /* -1: null */
    int64_t delta;        /* timestamp delta */
    Py_ssize_t body;      /* the record's length */
    PyObject *headers;    /* NULL: none (written as count 0); else a list/tuple checked by headers_size */
} record_plan;

/* Writes the planned records (offset delta = position); needs the GIL only for records with headers. */
static void write_records(uint8_t *p, const record_plan *plan, Py_ssize_t count) {
    for (Py_ssize_t i = 0; i < count; i++) {
        const record_plan *r = &plan[i];
        p = put_zz(p, r->body);
        *p++ = 0;
        p = put_zz(p, r->delta);
        p = put_zz(p, i);
        p = put_zz(p, r->key_len);
        if (r->key_len > 0) {
            memcpy(p, r->key, (size_t)r->key_len);
            p += r->key_len;
        }
        p = put_zz(p, r->value_len);
        if (r->value_len > 0) {
            memcpy(p, r->value, (size_t)r->value_len);
            p += r->value_len;
        }
        if (r->headers != NULL) {
            p = put_headers(p, r->headers);
        } else {
            *p++ = 0;
        }
    }
}

static PyObject *encode_record_tuples(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 && nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "encode_record_tuples(records, base_timestamp, header_room=0) takes 2 or 3 arguments");
        return NULL;
    }
    Py_ssize_t room = 0;
    if (nargs == 3) {
        room = PyLong_AsSsize_t(args[2]);
        if (room == -1 && PyErr_Occurred()) return NULL;
        if (room < 0) {
            PyErr_SetString(PyExc_ValueError, "header_room must not be negative");
            return NULL;
        }
    }
    PyObject *records = args[0];
    if (!PyList_CheckExact(records)) Py_RETURN_NONE;
    int overflow = 0;
    long long base = PyLong_AsLongLongAndOverflow(args[1], &overflow);
    if (overflow || (base == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Py_ssize_t count = PyList_GET_SIZE(records);
    record_plan *plan = PyMem_Malloc(sizeof(record_plan) * (size_t)(count > 0 ? count : 1));
    if (plan == NULL) return PyErr_NoMemory();
    /* pass 1: sizes and checks, with the GIL (Python objects are read); the list is not changed meanwhile */
    Py_ssize_t total = room;
    long long max_ts = base;
    int any_headers = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t delta;
        PyObject *key = NULL, *value = NULL, *headers = NULL;
        if (record_fields(PyList_GET_ITEM(records, i), (int64_t)base, &delta, &key, &value, &headers, &max_ts))
            goto python_path;
        Py_ssize_t kl = field_len(key), vl = field_len(value);
        if (kl == -2 || vl == -2) goto python_path;
        Py_ssize_t hs = 1;
        PyObject *header_list = NULL;
        if (PyObject_IsTrue(headers) != 0) { /* non-empty (or an error: the Python path reports it) */
            PyErr_Clear();
            hs = headers_size(headers);
            if (hs < 0) goto python_path;
            header_list = headers;
            any_headers = 1;
        }
        Py_ssize_t body = 1 + zz_size(delta) + zz_size(i) + zz_size(kl) + (kl > 0 ? kl : 0) + zz_size(vl) +
                          (vl > 0 ? vl : 0) + hs;
        plan[i] = (record_plan){kl > 0 ? PyBytes_AS_STRING(key) : NULL, kl, vl > 0 ? PyBytes_AS_STRING(value) : NULL,
                                vl, delta, body, header_list};
        total += zz_size(body) + body;
    }
    PyObject *result = PyByteArray_FromStringAndSize(NULL, total);
    if (result == NULL) {
        PyMem_Free(plan);
        return NULL;
    }
    uint8_t *out = (uint8_t *)PyByteArray_AS_STRING(result);
    memset(out, 0, (size_t)room);
    /* pass 2: write. Without headers only bytes contents are read - immutable objects the list keeps
     * alive - into a buffer nobody else sees yet: a large batch is written without the GIL. */
    if (!any_headers && total > (1 << 16)) {
        Py_BEGIN_ALLOW_THREADS
        write_records(out + room, plan, count);
        Py_END_ALLOW_THREADS
    } else {
        write_records(out + room, plan, count);
    }
    PyMem_Free(plan);
    return Py_BuildValue("(NL)", result, max_ts);
python_path:
    PyMem_Free(plan);
    Py_RETURN_NONE;
}

static PyObject *s_appendable, *s_estimated_size, *s_records, *s_callbacks, *s_full;

static int intern_names(void) {
    if (s_full != NULL) return 0;
    s_appendable = PyUnicode_InternFromString("appendable");
    s_estimated_size = PyUnicode_InternFromString("estimated_size");
    s_records = PyUnicode_InternFromString("records");
    s_callbacks = PyUnicode_InternFromString("callbacks");
    s_full = PyUnicode_InternFromString("full");
    return (s_appendable && s_estimated_size && s_records && s_callbacks && s_full) ? 0 : -1;
}

/* Allocating a GC-tracked object may run a collection, and with it finalizers: Python code, during which
 * another thread can take the GIL. So every such object is allocated first; from the decision on there
 * are only non-GC allocations (ints, list growth) and attribute writes of existing keys. */
static PyObject *do_append(PyObject *queue, long long batch_size, long long size, PyObject *timestamp,
                           PyObject *key, PyObject *value, PyObject *headers, PyObject *callback,
                           PyObject *future_type, PyObject *wakeup) {
    Py_ssize_t n = PyObject_Size(queue);
    if (n < 0) return NULL;
    if (n == 0) Py_RETURN_NONE;
    PyObject *batch = PySequence_GetItem(queue, n - 1);
    if (batch == NULL) return NULL;
    PyObject *result = NULL, *record = NULL, *future = NULL, *entry = NULL, *last = NULL;
    PyObject *appendable = NULL, *estimated_obj = NULL, *records = NULL, *callbacks = NULL;
    int wake = 0;
    /* GC allocations first (see above) */
    record = PyTuple_Pack(4, timestamp, key, value, headers);
    if (record == NULL) goto done;
    if (PyTuple_CheckExact(headers) && PyTuple_GET_SIZE(headers) == 0 && PyLong_CheckExact(timestamp) &&
        (key == Py_None || PyBytes_CheckExact(key)) && (value == Py_None || PyBytes_CheckExact(value)))
        PyObject_GC_UnTrack(record); /* no container inside: it can be in no cycle (as the GC itself concludes
                                        for such tuples, one collection later) */
    future = ((PyTypeObject *)future_type)->tp_alloc((PyTypeObject *)future_type, 3);
    if (future == NULL) goto done;
    if (callback != Py_None) {
        entry = PyTuple_New(3);
        if (entry == NULL) goto done;
    }
    /* the decision and the append: no GC allocation from here on */
    n = PyObject_Size(queue);
    if (n < 0) goto done;
    last = n > 0 ? PySequence_GetItem(queue, n - 1) : NULL;
    if (n > 0 && last == NULL) goto done;
    if (last != batch) { /* the queue moved on meanwhile: the slow path decides */
        result = Py_NewRef(Py_None);
        goto done;
    }
    appendable = PyObject_GetAttr(batch, s_appendable);
    if (appendable == NULL) goto done;
    if (appendable != Py_True) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    estimated_obj = PyObject_GetAttr(batch, s_estimated_size);
    if (estimated_obj == NULL) goto done;
    long long estimated = PyLong_AsLongLong(estimated_obj);
    if (estimated == -1 && PyErr_Occurred()) goto done;
    estimated += size;
    if (estimated > batch_size) { /* an appendable batch holds a record already: this one opens the next */
        if (PyObject_SetAttr(batch, s_full, Py_True) < 0 || PyObject_SetAttr(batch, s_appendable, Py_False) < 0)
            goto done;
        result = Py_NewRef(Py_None);
        goto done;
    }
    records = PyObject_GetAttr(batch, s_records);
    if (records == NULL) goto done;
    if (callback != Py_None) {
        callbacks = PyObject_GetAttr(batch, s_callbacks);
        if (callbacks == NULL) goto done;
    }
    if (!PyList_CheckExact(records) || (callbacks != NULL && !PyList_CheckExact(callbacks))) {
        PyErr_SetString(PyExc_TypeError, "batch.records and batch.callbacks must be lists");
        goto done;
    }
    Py_ssize_t index = PyList_GET_SIZE(records);
    PyObject *index_obj = PyLong_FromSsize_t(index); /* ints are not GC-tracked */
    if (index_obj == NULL) goto done;
    PyObject *new_estimated = PyLong_FromLongLong(estimated);
    if (new_estimated == NULL) {
        Py_DECREF(index_obj);
        goto done;
    }
    PyTuple_SET_ITEM(future, 0, Py_NewRef(batch));
    PyTuple_SET_ITEM(future, 1, index_obj);
    PyTuple_SET_ITEM(future, 2, Py_NewRef(timestamp));
    if (PyList_Append(records, record) < 0) {
        Py_DECREF(new_estimated);
        goto done;
    }
    int failed = PyObject_SetAttr(batch, s_estimated_size, new_estimated) < 0;
    Py_DECREF(new_estimated);
    if (failed) goto done;
    if (entry != NULL) {
        PyTuple_SET_ITEM(entry, 0, Py_NewRef(index_obj));
        PyTuple_SET_ITEM(entry, 1, Py_NewRef(timestamp));
        PyTuple_SET_ITEM(entry, 2, Py_NewRef(callback));
        if (PyList_Append(callbacks, entry) < 0) goto done;
    }
    if (estimated >= batch_size) {
        if (PyObject_SetAttr(batch, s_full, Py_True) < 0 || PyObject_SetAttr(batch, s_appendable, Py_False) < 0)
            goto done;
        wake = 1;
    }
    result = Py_NewRef(future);
done:
    Py_XDECREF(callbacks);
    Py_XDECREF(records);
    Py_XDECREF(estimated_obj);
    Py_XDECREF(appendable);
    Py_XDECREF(last);
    Py_XDECREF(entry);
    Py_XDECREF(future);
    Py_XDECREF(record);
    Py_DECREF(batch);
    if (wake && result != NULL) { /* after the append: Python code may run again */
        PyObject *woken = PyObject_CallNoArgs(wakeup);
        if (woken == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(woken);
    }
    return result;
}

static PyObject *append_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError,
                        "append_record(queue, batch_size, size, timestamp, key, value, headers, callback, "
                        "future_type, wakeup) takes 10 arguments");
        return NULL;
    }
    PyObject *queue = args[0], *future_type = args[8];
    if (queue == Py_None) Py_RETURN_NONE;
    if (intern_names() < 0) return NULL;
    if (!PyType_Check(future_type) || !PyType_IsSubtype((PyTypeObject *)future_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "future_type must be a tuple subclass");
        return NULL;
    }
    long long batch_size = PyLong_AsLongLong(args[1]);
    if (batch_size == -1 && PyErr_Occurred()) return NULL;
    long long size = PyLong_AsLongLong(args[2]);
    if (size == -1 && PyErr_Occurred()) return NULL;
    return do_append(queue, batch_size, size, args[3], args[4], args[5], args[6], args[7], future_type, args[9]);
}

/* A topic's state: a list, laid out as client.producer.send_path's TOPIC_* indices (topic_state_layout). */
enum {
    TOPIC_INFO,            /* the metadata entry it was built from (not read here) */
    TOPIC_NEXT_CHECK_NS,   /* int, wall-clock ns: from then on the Python send checks it against the cache */
    TOPIC_PARTITION_COUNT, /* int */
    TOPIC_AVAILABLE,       /* the partitions with a leader (not read here) */
    TOPIC_PARTITIONS,      /* list: the TopicPartition of each partition, by index */
    TOPIC_EXPIRES_AT,      /* monotonic s: metadata.max.age.ms reached (not read here) */
    TOPIC_STATE_SIZE
};

/* send(topic, value, key) of the common case, compiled: see make_send below. The context is this
 * function object's self, a tuple: */
enum {
    CTX_PRODUCER,     /* ._closed must be False */
    CTX_SENDER,       /* .fatal_error must be None */
    CTX_TOPICS,       /* dict topic -> its state (TOPIC_* above) */
    CTX_QUEUES,       /* the accumulator's dict TopicPartition -> deque of batches */
    CTX_BATCH_SIZE,   /* int */
    CTX_MAX_REQUEST,  /* int: larger records go to the fallback, which raises */
    CTX_OVERHEAD,     /* int: the record size estimate's overhead (producer_batch._RECORD_OVERHEAD) */
    CTX_FUTURE_TYPE,  /* RecordFuture */
    CTX_WAKEUP,       /* sender.wakeup */
    CTX_FALLBACK,     /* the Python send: every call this path does not finish goes there, unchanged */
    CTX_SIZE
};

static PyObject *s_closed, *s_fatal_error, *empty_tuple;

static PyObject *fast_send(PyObject *ctx, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    PyObject *fallback = PyTuple_GET_ITEM(ctx, CTX_FALLBACK);
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if ((kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) || nargs != 3) goto slow;
    PyObject *topic = args[0], *value = args[1], *key = args[2];
    if (!PyBytes_CheckExact(key) || (value != Py_None && !PyBytes_CheckExact(value)) || !PyUnicode_CheckExact(topic))
        goto slow;
    PyObject *flag = PyObject_GetAttr(PyTuple_GET_ITEM(ctx, CTX_PRODUCER), s_closed);
    if (flag == NULL) return NULL;
    Py_DECREF(flag);
    if (flag != Py_False) goto slow;
    flag = PyObject_GetAttr(PyTuple_GET_ITEM(ctx, CTX_SENDER), s_fatal_error);
    if (flag == NULL) return NULL;
    Py_DECREF(flag);
    if (flag != Py_None) goto slow;
    PyObject *state = PyDict_GetItemWithError(PyTuple_GET_ITEM(ctx, CTX_TOPICS), topic); /* borrowed */
    if (state == NULL) {
        if (PyErr_Occurred()) return NULL;
        goto slow;
    }
    if (!PyList_CheckExact(state) || PyList_GET_SIZE(state) <= TOPIC_PARTITIONS) goto slow;
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) goto slow; /* time.time_ns()'s clock */
    long long now_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    long long next_check = PyLong_AsLongLong(PyList_GET_ITEM(state, TOPIC_NEXT_CHECK_NS));
    if (next_check == -1 && PyErr_Occurred()) return NULL;
    if (now_ns >= next_check || now_ns < 0) goto slow;
    long long count = PyLong_AsLongLong(PyList_GET_ITEM(state, TOPIC_PARTITION_COUNT));
    if (count == -1 && PyErr_Occurred()) return NULL;
    PyObject *tps = PyList_GET_ITEM(state, TOPIC_PARTITIONS);
    if (count <= 0 || !PyList_CheckExact(tps) || PyList_GET_SIZE(tps) != count) goto slow;
    Py_ssize_t key_len = PyBytes_GET_SIZE(key);
    long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(ctx, CTX_OVERHEAD)) + key_len +
                     (value != Py_None ? PyBytes_GET_SIZE(value) : 0);
    if (size > PyLong_AsLongLong(PyTuple_GET_ITEM(ctx, CTX_MAX_REQUEST))) goto slow;
    PyObject *tp = PyList_GET_ITEM(tps, murmur2_partition((const uint8_t *)PyBytes_AS_STRING(key), key_len, count));
    PyObject *queue = PyDict_GetItemWithError(PyTuple_GET_ITEM(ctx, CTX_QUEUES), tp); /* borrowed */
    if (queue == NULL) {
        if (PyErr_Occurred()) return NULL;
        goto slow;
    }
    Py_INCREF(queue);
    PyObject *timestamp = PyLong_FromLongLong(now_ns / 1000000);
    if (timestamp == NULL) {
        Py_DECREF(queue);
        return NULL;
    }
    PyObject *future = do_append(queue, PyLong_AsLongLong(PyTuple_GET_ITEM(ctx, CTX_BATCH_SIZE)), size, timestamp, key,
                                 value, empty_tuple, Py_None, PyTuple_GET_ITEM(ctx, CTX_FUTURE_TYPE),
                                 PyTuple_GET_ITEM(ctx, CTX_WAKEUP));
    Py_DECREF(timestamp);
    Py_DECREF(queue);
    if (future != Py_None) return future; /* the future, or NULL with the error */
    Py_DECREF(future);
slow:
    return PyObject_Vectorcall(fallback, args, nargsf, kwnames);
}

static PyMethodDef fast_send_def = {
    "send", (PyCFunction)(void (*)(void))fast_send, METH_FASTCALL | METH_KEYWORDS,
    "send($self, topic, value=None, key=None, *, partition=None, timestamp_ms=None, headers=None, "
    "on_delivery=None)\n--\n\nQueue one record; returns a future of its RecordMetadata (Producer.send; the "
    "common case compiled, see client.producer.send_path)."};

static PyObject *make_send(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != CTX_SIZE) {
        PyErr_SetString(PyExc_TypeError, "make_send(context) takes one tuple (see producer.c)");
        return NULL;
    }
    if (intern_names() < 0) return NULL;
    if (s_closed == NULL) {
        s_closed = PyUnicode_InternFromString("_closed");
        s_fatal_error = PyUnicode_InternFromString("fatal_error");
        empty_tuple = PyTuple_New(0);
        if (s_closed == NULL || s_fatal_error == NULL || empty_tuple == NULL) return NULL;
    }
    PyObject *future_type = PyTuple_GET_ITEM(args[0], CTX_FUTURE_TYPE);
    if (!PyType_Check(future_type) || !PyType_IsSubtype((PyTypeObject *)future_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "the future type must be a tuple subclass");
        return NULL;
    }
    for (int i = CTX_BATCH_SIZE; i <= CTX_OVERHEAD; i++) {
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(args[0], i))) {
            PyErr_SetString(PyExc_TypeError, "batch size, max request size and overhead must be ints");
            return NULL;
        }
    }
    return PyCFunction_New(&fast_send_def, args[0]);
}

static PyObject *topic_state_layout(PyObject *self, PyObject *unused) {
    return Py_BuildValue("{sisisisisisisi}", "TOPIC_INFO", TOPIC_INFO, "TOPIC_NEXT_CHECK_NS", TOPIC_NEXT_CHECK_NS,
                         "TOPIC_PARTITION_COUNT", TOPIC_PARTITION_COUNT, "TOPIC_AVAILABLE", TOPIC_AVAILABLE,
                         "TOPIC_PARTITIONS", TOPIC_PARTITIONS, "TOPIC_EXPIRES_AT", TOPIC_EXPIRES_AT,
                         "TOPIC_STATE_SIZE", TOPIC_STATE_SIZE);
}

PyMethodDef kernels_producer_methods[] = {
    {"key_partition", (PyCFunction)(void (*)(void))key_partition, METH_FASTCALL,
     "key_partition(key, num_partitions) -> int: Kafka's default partition of one key (murmur2)"},
    {"encode_record_tuples", (PyCFunction)(void (*)(void))encode_record_tuples, METH_FASTCALL,
     "encode_record_tuples(records, base_timestamp, header_room=0) -> (bytearray, max_timestamp) | None: "
     "header_room zero bytes, then the records section of a v2 batch from (timestamp_ms, key, value, headers) tuples; None "
     "when the Python path must handle them"},
    {"make_send", (PyCFunction)(void (*)(void))make_send, METH_FASTCALL,
     "make_send(context) -> send: Producer.send's common case compiled, the rest passed to the fallback "
     "in the context (see producer.c)"},
    {"append_record", (PyCFunction)(void (*)(void))append_record, METH_FASTCALL,
     "append_record(queue, batch_size, size, timestamp, key, value, headers, callback, future_type, wakeup) "
     "-> future | None: Producer.send's append to the open batch at the end of queue (see producer.c)"},
    {"topic_state_layout", topic_state_layout, METH_NOARGS,
     "topic_state_layout() -> dict: the indices of a topic's state in make_send's context, by "
     "client.producer.send_path's names"},
    {NULL, NULL, 0, NULL},
};
