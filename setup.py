"""Build definition of the one C extension, ``spark_kafkalog._kernels`` (everything else is in pyproject.toml).

Every ``spark_kafkalog/_kernels_src/*.c`` is compiled into that one module. ``module.c`` holds the module
definition; each other source ``<part>.c`` defines ``PyMethodDef kernels_<part>_methods[]`` (ending with a
``{NULL}`` sentinel), which ``module.c`` adds to the module through the ``KERNELS_PARTS`` macro set here.
Adding a source file is all it takes to add functions. The extension is optional: without a compiler the
install still succeeds and callers use the pure-Python implementations (``spark_kafkalog.kernels``).
"""

from pathlib import Path

from setuptools import Extension, setup

SOURCES = sorted(Path("spark_kafkalog/_kernels_src").glob("*.c"))
PARTS = [p.stem for p in SOURCES if p.stem != "module"]

setup(
    ext_modules=[
        Extension(
            "spark_kafkalog._kernels",
            sources=[str(p) for p in SOURCES],
            depends=[str(p) for p in sorted(Path("spark_kafkalog/_kernels_src").glob("*.h"))],
            define_macros=[("KERNELS_PARTS", "".join(f"X({part})" for part in PARTS))],
            extra_compile_args=["-O3", "-std=c11"],
            optional=True,
        )
    ]
)
