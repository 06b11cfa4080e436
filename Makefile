# kafkalog: `make run` (set-up plus the main job) and `make test` (set-up plus the test suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install install-kcat run lint test test-all bench docs stubs peers compat clean

install: $(STAMP) install-kcat

# Re-install when the project metadata or the C kernels (setup.py, spark_kafkalog/_kernels_src/*.c: compiled
# into spark_kafkalog._kernels by the editable install) change; a no-op otherwise (idempotent). The editable install is
# in setuptools' compat mode (a path entry, not an import hook) so Spark's scan for pyspark_* modules finds
# pyspark_kafkalog and format("kafkalog") works in any session without register(). An editable wheel holds
# no .pth of the project's own, so the one that points Spark's workers at this interpreter is copied here
# (a wheel install puts it there itself: setup.py).
$(STAMP): pyproject.toml setup.py Makefile pyspark_kafkalog/kafkalog-pyspark-python.pth $(wildcard spark_kafkalog/_kernels_src/*.c spark_kafkalog/_kernels_src/*.h)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel
	$(PY) -m pip install --quiet -e '.[dev]' --config-settings editable_mode=compat \
	  || $(PY) -m pip install --quiet -e '.[dev]'  # a setuptools without compat mode: register(spark) then
	cp pyspark_kafkalog/kafkalog-pyspark-python.pth "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/"
	touch $(STAMP)

# kcat for the kcat -G group test: apt-installed (quietly) when missing and we are root; else that test skips.
install-kcat:
	@command -v kcat >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq kcat >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && \
	      apt-get install -y -qq kcat >/dev/null 2>&1; } || echo "kcat could not be installed: kcat tests will be skipped"; \
	  else echo "kcat is missing and we are not root: kcat tests will be skipped"; fi; }

run: install
	$(PY) -m jobs.main

# Lint (ruff), format check (ruff format), stubs current (fails naming each stale one: run make stubs) and type
# check (mypy, the packages listed in pyproject.toml).
lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m spark_kafkalog.protocol.stubs --check
	$(PY) -m mypy

test: install lint
	$(PY) -m pytest -q

# Everything, including the opt-in slow soak tests (not the compat suite: make compat).
test-all: install
	$(PY) -m pytest -q -m "not compat"

# Apache Kafka's brokers, clients and tools and Spark's Kafka connector, fetched by Maven from the poms in
# peers/ into .peers/ (or $$KAFKALOG_PEERS_DIR); reused when present, one line naming what could not be fetched.
peers: install
	$(PY) -m tests.compat.peers

# kafkalog against Apache Kafka and Apache Kafka's clients and tools against kafkalog: docs/compatibility.md.
compat: install peers
	$(PY) -m pytest -q -m compat tests/compat

bench: install
	$(PY) -m bench.run_all

docs: install
	$(PY) -m spark_kafkalog.protocol.coverage > docs/protocol.md
	$(PY) -c 'from broker.config import render_docs; print(render_docs())' > docs/configuration.md
	$(PY) -c 'from broker.handlers import render_docs; print(render_docs(), end="")' > docs/broker-apis.md

# The message classes' type stubs, spark_kafkalog/protocol/apis/*.pyi, from the declarations.
stubs: install
	$(PY) -m spark_kafkalog.protocol.stubs

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis spark_kafkalog/_kernels.*.so
