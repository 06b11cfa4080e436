"""Build definition of the one C extension, ``spark_kafkalog._kernels``, and of the ``.pth`` file that
chooses Spark's worker interpreter (everything else is in pyproject.toml).

Every ``spark_kafkalog/_kernels_src/*.c`` is compiled into that one module. ``module.c`` holds the module
definition; each other source ``<part>.c`` defines ``PyMethodDef kernels_<part>_methods[]`` (ending with a
``{NULL}`` sentinel), which ``module.c`` adds to the module through the ``KERNELS_PARTS`` macro set here.
Adding a source file is all it takes to add functions. The extension is optional: without a compiler the
install still succeeds and callers use the pure-Python implementations (``spark_kafkalog.kernels``).
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

# Put at the top of site-packages by a wheel (``make install``'s editable install copies it there itself):
# Spark's Python workers on this interpreter (pyspark_kafkalog/_worker_python.py).
WORKER_PYTHON_PTH = Path("pyspark_kafkalog/kafkalog-pyspark-python.pth")


class BuildPyWithPth(build_py):
    """``build_py`` that also places ``WORKER_PYTHON_PTH`` at the root of the build (so of the wheel)."""

    def run(self) -> None:
        super().run()
        self.copy_file(str(WORKER_PYTHON_PTH), str(Path(self.build_lib, WORKER_PYTHON_PTH.name)))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib, WORKER_PYTHON_PTH.name))]


SOURCES = sorted(Path("spark_kafkalog/_kernels_src").glob("*.c"))
PARTS = [p.stem for p in SOURCES if p.stem != "module"]

setup(
    cmdclass={"build_py": BuildPyWithPth},
    ext_modules=[
        Extension(
            "spark_kafkalog._kernels",
            sources=[str(p) for p in SOURCES],
            depends=[str(p) for p in sorted(Path("spark_kafkalog/_kernels_src").glob("*.h"))],
            define_macros=[("KERNELS_PARTS", "".join(f"X({part})" for part in PARTS))],
            extra_compile_args=["-O3", "-std=c11"],
            optional=True,
        )
    ],
)
