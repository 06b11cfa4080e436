/* spark_kafkalog._kernels: the narrow compiled hot loops of the record formats (see setup.py).
 *
 * Each other source file <part>.c in this directory defines `PyMethodDef kernels_<part>_methods[]`;
 * setup.py passes the list of parts as KERNELS_PARTS = X(part1)X(part2)..., and every table is added to
 * the module here. The functions release no locks and keep no state: they are thread-safe as long as the
 * buffers they are given are not written concurrently.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#ifndef KERNELS_PARTS
#define KERNELS_PARTS
#endif

#define X(part) extern PyMethodDef kernels_##part##_methods[];
KERNELS_PARTS
#undef X

static struct PyModuleDef kernels_module = {
    PyModuleDef_HEAD_INIT, "spark_kafkalog._kernels",
    "Compiled record-format kernels (record batch v2 encode/decode); see spark_kafkalog.kernels.", -1, NULL,
};

PyMODINIT_FUNC PyInit__kernels(void) {
    PyObject *module = PyModule_Create(&kernels_module);
    if (module == NULL) return NULL;
#define X(part)                                                      \
    if (PyModule_AddFunctions(module, kernels_##part##_methods) < 0) { \
        Py_DECREF(module);                                           \
        return NULL;                                                 \
    }
    KERNELS_PARTS
#undef X
    return module;
}
