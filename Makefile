# The course's commands. `make lab` and `make test` are the README's two commands:
# each sets up a project-local virtual environment (.venv) on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.installed
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: help setup lab instructor test test-fast test-under-load record-nbgrader-verdicts lint course check-course bench clean

$(READY): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed, found " + sys.version.split()[0])'
	@echo "Setting up the course's own Python environment in $(VENV)/ (once; later runs start at once)."
	@echo "  1/3 creating $(VENV)/"
	@$(PYTHON) -m venv $(VENV)
	@echo "  2/3 updating pip"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "  3/3 installing the course and its tools: numpy, scipy, matplotlib, JupyterLab, nbgrader (about a minute)"
	@$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@
	@echo "$(VENV)/ is ready."

help:  ## list these commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 16

setup: $(READY)  ## create .venv and install the course and its tools

# The root check comes first: it needs only the standard library, so nothing is installed for a refused run.
lab:  ## open the course in JupyterLab (learner setup)
	@$(PYTHON) -m autograder.authoring.lab $(ARGS)
	@$(MAKE) --no-print-directory setup
	$(BIN)/python -m autograder lab $(ARGS)

instructor: $(READY)  ## open JupyterLab with nbgrader's formgrader on the course
	$(BIN)/python -m autograder lab --instructor $(ARGS)

test: $(READY)  ## run the whole test suite
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# The fast layer: the reference code, the checks and their diagnoses, the course's build; no sandbox, no browser.
FAST_TESTS := tests/test_examples.py tests/test_activations.py tests/test_ffn.py tests/test_norm.py \
	tests/test_budgets.py tests/test_module.py tests/test_properties.py tests/test_checks.py tests/test_mistakes.py \
	tests/test_bad_input.py tests/test_memory.py tests/test_moe.py tests/test_precision.py tests/test_training.py \
	tests/test_course_build.py tests/test_diagnoses.py tests/test_sleeps.py \
	tests/test_run_locks.py
test-fast: $(READY)  ## run the fast layer of the tests (reference code, checks, mistakes, course build): minutes
	$(BIN)/python -m pytest -n 2 --dist loadgroup $(FAST_TESTS)

# The whole suite beside two CPU-bound processes: no test may depend on how busy the machine is.
test-under-load: $(READY)  ## run the whole test suite with two CPU-bound processes beside it
	@pids=; for i in 1 2; do $(BIN)/python -c 'while True: pass' & pids="$$pids $$!"; done; trap "kill $$pids" EXIT; \
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# Plain nbgrader's verdicts on the grading variants, which the suite reads while their key holds (tests/plain_nbgrader.py).
record-nbgrader-verdicts: $(READY)  ## regrade every grading variant with plain nbgrader and rewrite tests/submissions/nbgrader_verdicts/
	FFN_RECORD_NBGRADER_VERDICTS=1 $(BIN)/python -m pytest -n 2 --dist loadgroup tests/test_grading_variants.py \
		-k "not test_the_nbgrader_verdicts_are_recorded"

lint: $(READY)  ## check the code's style (ruff) and its architecture (lint-imports: pyproject.toml's contracts)
	$(BIN)/ruff check .
# the course's sources are left out above (long nbgrader metadata lines); named, they are checked for complexity
	$(BIN)/ruff check --select C901 autograder/course/source/*/*.py
	$(BIN)/lint-imports

course: $(READY)  ## regenerate notebooks/ and solutions/ from autograder/course/source/
	$(BIN)/python -m autograder build

check-course: $(READY)  ## fail if notebooks/ or solutions/ differ from a fresh build
	$(BIN)/python -m autograder build --check

bench: $(READY)  ## print the performance table
	$(BIN)/python -m benchmarks

clean:  ## remove .venv and the caches (never the class's data in autograder/course/)
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis artifacts
