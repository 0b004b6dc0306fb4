# recompile-doctor developer tasks.  `make help` lists them.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
COMPILED = build/compiled
#: the C compiler's optimization level of a compiled build (setup.py)
MYPYC_OPT ?= 3
#: the compiled build `make test` builds and tests: its C compiled at -O0, in a folder of its
#: own (build/compiled stays the -O3 build the benchmarks time).  The behaviour is the same;
#: the C compiler takes half a minute of a core instead of two and a half, while the
#: tests beside it need the cores, and the compiled build's tests take a tenth longer
TEST_COMPILED = build/compiled-O0
#: the tests run again against the compiled build: all but those of modules it does not
#: compile that take long (the fleet, the HTML page, the framework decoders' takeovers on
#: names, the workers' reading
#: of gzip logs: the scanner's own reading of gzip is tested in both; how the workers fail,
#: are spared, are logged and report progress, all of them the team's own, uncompiled;
#: and the compilations' columns' own tests, though compiled: every analysis reads the
#: columns in both runs, and leaving out their 10 s keeps CI within its ten minutes);
#: each property test draws a fifth of its examples (COMPILED_EXAMPLES)
COMPILED_TESTS = tests $(addprefix --ignore=tests/,e2e \
	test_compilation_table.py test_fleet.py test_startup_imports.py \
	test_html_render.py test_html_plots.py test_html_goldens.py test_html_view.py) \
	$(addprefix --deselect=tests/test_parallel.py::,\
	test_a_tensorflow_takeover_with_the_parents_counts_packed_is_the_one_process_result \
	test_a_takeover_on_names_among_the_parents_is_the_one_process_result \
	'test_several_processes_match_one_on_every_fixture[True-' \
	test_a_gzip_log_ending_early_is_read_as_one_process_reads_it \
	test_a_worker_meeting_the_break_of_a_gzip_log_leaves_it_to_the_reader_before \
	test_a_gzip_log_of_several_members_is_read_as_one_process_reads_it \
	test_a_gzip_stream_is_searched_for_line_starts_forward_in_bounded_memory \
	test_a_failed_worker_leaves_the_others_to_read_its_part \
	test_a_worker_failing_while_its_events_are_taken_leaves_the_rest_to_the_parent \
	test_how_the_parts_were_read_is_logged test_progress_only_goes_up_and_ends_at_the_size \
	test_no_process_to_spare_leaves_fewer_to_read \
	test_a_worker_whose_parent_is_gone_removes_the_team_files_and_stops)
STAMP   = $(VENV)/.installed-$(shell $(PYTHON) -c 'import hashlib,sys;print(hashlib.md5(open("pyproject.toml","rb").read()).hexdigest()[:8])')

.PHONY: help setup native demo test test-pythons test-compiled compiled compiled-aside compiled-tests pure-tests browser-then-tests lint lint-aside bench bench-full goldens clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

#: the set-up, timed (CI's log says where its minutes go); the bytecode is made by compileall
#: on every core (pip makes it one file at a time: half of the step's minute; as with pip, a
#: file that does not compile is left to its import); by the venv's own python whatever PY
#: says (`make compiled PY=/elsewhere/.venv/bin/python` in a clone pointed that other venv's
#: editable install at the clone)
$(STAMP): pyproject.toml
	@s=$$(date +%s); set -e; \
	echo "$(PYTHON) -m venv $(VENV) and pip install -e '.[test]'"; \
	$(PYTHON) -m venv $(VENV); \
	$(VENV)/bin/python -m pip install -q --upgrade pip; \
	$(VENV)/bin/python -m pip install -q --no-compile -e '.[test]'; \
	$(VENV)/bin/python -m compileall -qq -j 0 $(VENV)/lib || true; \
	rm -f $(VENV)/.installed-*; touch $@; \
	echo "set-up: done in $$(( $$(date +%s) - s )) s"
setup: $(STAMP)  ## create .venv and install the package with its test tools

#: the C module (recompile_doctor/parsers/_native.c and its parts: the scanner's byte work,
#: slotted objects, the JSON text, the event codec), built in place beside the source as
#: the editable install builds it, again whenever a C file or header is newer (the package
#: does the same work in Python where it is not built: no C compiler); in folders
#: of its own under build/native, which the compiled build's fresh start (its rm of
#: build/lib.* and build/temp.*, beside the tests in `make test`) cannot take from under it
native: $(STAMP)
	@$(PY) setup.py -q build_ext --inplace --build-lib build/native/lib --build-temp \
		build/native/temp 2>&1 | { grep -v -e '^$$' -e 'running build_ext' || true; }

demo: $(STAMP) native  ## simulate a run with recompilation problems, analyze it, write the HTML report
	$(VENV)/bin/recompile-doctor demo

test: $(STAMP) native  ## lint, the tests, then the compiled build's (what CI runs); installs the browser for the HTML tests when root
	@if [ -z "$$CI" ] && ! command -v cc >/dev/null 2>&1; then \
		echo "make test: no C compiler (cc): the compiled build is neither built nor tested here (CI must)"; \
		$(MAKE) --no-print-directory lint && $(MAKE) --no-print-directory browser-then-tests; \
	else \
		$(MAKE) --no-print-directory -j3 lint-aside browser-then-tests compiled-aside && \
		$(MAKE) --no-print-directory compiled-tests COMPILED=$(TEST_COMPILED); \
	fi

#: the other Pythons `make test-pythons` runs the suite under, where they run (names on the
#: PATH or paths: `make test-pythons OTHER_PYTHONS=~/.pyenv/versions/3.13.0/bin/python3`)
OTHER_PYTHONS ?= python3.12 python3.13 python3.14

#: the suite (`make test`) under each of OTHER_PYTHONS that is installed, each in a clone
#: of the last commit of its own under build/pythons/ (its .venv made with that Python, its
#: C module and compiled build too); CI runs the venv's Python only.  Several minutes each
test-pythons:  ## `make test` under each other Python 3.12+ found, in clones of HEAD under build/pythons
	@ran=; for py in $(OTHER_PYTHONS); do \
		exe=$$($$py -c 'import sys; assert sys.version_info >= (3, 11); print(sys.executable)' 2>/dev/null) \
			|| { echo "test-pythons: $$py: not found (or older than 3.11), skipped"; continue; }; \
		d=build/pythons/$$($$exe -c 'import sys; print("python%d.%d" % sys.version_info[:2])'); \
		rm -rf $$d; git clone -q . $$d || exit 1; \
		echo "test-pythons: $$py ($$exe): make test in $$d (output in $$d.log)"; \
		if $(MAKE) --no-print-directory -C $$d test PYTHON=$$exe >$$d.log 2>&1; then \
			echo "test-pythons: $$py: passed ($$(grep -h -E '^[0-9]+ passed' $$d.log | tr '\n' ' '))"; \
			ran="$$ran $$py"; \
		else tail -30 $$d.log; echo "test-pythons: $$py: FAILED (all of it in $$d.log)"; exit 1; fi; \
	done; echo "test-pythons: passed on:$${ran:- none found}"

#: the share of each property test's examples drawn, in percent, by the tests and by the
#: compiled build's tests (``make test EXAMPLES=100 COMPILED_EXAMPLES=100`` draws them all;
#: plain pytest does): the property tests were a third of the suite's CPU, and the suite must
#: pass in CI in under ten minutes on two cores of a machine whose speed drifts by half
#: (50 and 20 until a fresh clone's run took 9m54s on 2026-11-30: 35 and 12 take about
#: 25 s off it, measured as 57 s of the source run's 256 s at 50)
EXAMPLES ?= 35
COMPILED_EXAMPLES ?= 12

#: the tests' bytecode, and pytest's rewritten test modules, are written under build/
#: whatever the environment says (PYTHONDONTWRITEBYTECODE): otherwise every process of the
#: tests compiles every module it imports again, and pytest rewrites every test module in
#: each of its workers and in both runs (ten seconds a process)
TEST_ENV = PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX="$(CURDIR)/build/pycache"

#: the tests fail if the C module is missing where a C compiler is (tests/test_native_spans.py)
EXPECT_NATIVE = RECOMPILE_DOCTOR_EXPECT_NATIVE=$$(command -v cc >/dev/null 2>&1 && echo 1)

pure-tests: native  # (the tests, on the package as it is)
	$(EXPECT_NATIVE) RECOMPILE_DOCTOR_EXAMPLES_PERCENT=$(EXAMPLES) $(TEST_ENV) $(PY) -m pytest -n auto --dist worksteal

#: the browser for the HTML tests (installing it is mostly waiting on the network and the
#: disk, done while lint and the compiled build run), then the tests
browser-then-tests:
	@bash tests/e2e/install-browser.sh
	@$(MAKE) --no-print-directory pure-tests

#: lint beside the tests and the build (mypy keeps one core busy for twenty seconds), its
#: output in build/lint.log, shown if it fails
lint-aside: $(STAMP)
	@mkdir -p build
	@s=$$(date +%s); $(MAKE) --no-print-directory lint >build/lint.log 2>&1 || \
		{ cat build/lint.log; echo "make lint failed (build/lint.log)"; exit 1; }; \
		echo "make lint: passed in $$(( $$(date +%s) - s )) s ($$(tail -n 1 build/lint.log))"

#: the compiled build made while the tests run (mypyc's analysis and C writing keep one core
#: busy for a minute and a half, the C compiler at -O0 for half a minute more), its output
#: in build/compiled.log, shown if it fails
compiled-aside: $(STAMP)
	@mkdir -p build
	@echo "make compiled: building $(TEST_COMPILED) aside, output in build/compiled.log"
	@s=$$(date +%s); $(MAKE) --no-print-directory compiled COMPILED=$(TEST_COMPILED) MYPYC_OPT=0 \
		>build/compiled.log 2>&1 || \
		{ cat build/compiled.log; echo "make compiled failed (build/compiled.log)"; exit 1; }; \
		echo "make compiled: built in $$(( $$(date +%s) - s )) s"

#: (mypyc's type check keeps its cache apart from mypy's: `make test` runs the two at once,
#: and sharing one, the build once failed on "database is locked")
compiled: $(STAMP)  ## build the mypyc-compiled package into build/compiled (README: "The compiled build")
	rm -rf $(COMPILED) build/wheels build/lib.* build/temp.* build/bdist.*
	RECOMPILE_DOCTOR_MYPYC=1 RECOMPILE_DOCTOR_MYPYC_OPT=$(MYPYC_OPT) MYPY_CACHE_DIR=$(CURDIR)/build/mypyc-cache \
		$(PY) -m pip wheel -q --no-build-isolation --no-deps -w build/wheels .
	$(PY) -m pip install -q --no-deps --target $(COMPILED) build/wheels/recompile_doctor-*.whl

test-compiled: compiled  ## the tests of what the compiled build compiles, run against it
	$(MAKE) --no-print-directory compiled-tests

compiled-tests:  # (the compiled build's tests, on the build there is)
	RECOMPILE_DOCTOR_EXPECT_COMPILED=1 RECOMPILE_DOCTOR_EXPECT_NATIVE=1 \
		RECOMPILE_DOCTOR_EXAMPLES_PERCENT=$(COMPILED_EXAMPLES) \
		PYTHONSAFEPATH=1 \
		PYTHONPATH=$(COMPILED):. $(TEST_ENV) \
		$(PY) -m pytest -n auto --dist worksteal -p no:cacheprovider $(COMPILED_TESTS)

lint: $(STAMP)  ## ruff (lint + format check) and mypy --strict
	$(VENV)/bin/ruff check recompile_doctor tests benchmarks
	$(VENV)/bin/ruff format --check recompile_doctor tests benchmarks
	$(VENV)/bin/mypy

bench: $(STAMP)  ## the benchmarks on small inputs, a few minutes (figures printed, never asserted)
	$(PY) benchmarks/run_all.py --quick

bench-full: $(STAMP)  ## the benchmarks at the README's sizes (1 GB logs, 10,000 runs): an hour or more
	$(PY) benchmarks/run_all.py

goldens: $(STAMP)  ## regenerate the golden files after an intended output change
	RD_REGEN_GOLDENS=1 $(PY) -m pytest -q tests
	git status --short tests/goldens

clean:  ## remove the virtualenv and build artefacts
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache
	rm -f recompile_doctor/parsers/_native.*.so
