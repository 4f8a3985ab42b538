# The course's commands. `make lab` and `make test` are the README's two commands:
# each sets up a project-local virtual environment (.venv) on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.installed
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: help setup lab instructor test lint course check-course bench clean

$(READY): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed, found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

help:  ## list these commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 16

setup: $(READY)  ## create .venv and install the course and its tools

lab: $(READY)  ## open the course in JupyterLab (learner setup)
	$(BIN)/python -m autograder lab $(ARGS)

instructor: $(READY)  ## open JupyterLab with nbgrader's formgrader on the course
	$(BIN)/python -m autograder lab --instructor $(ARGS)

test: $(READY)  ## run the whole test suite
	$(BIN)/python -m pytest -n 2 --dist loadgroup

lint: $(READY)  ## check the code's style (ruff)
	$(BIN)/ruff check .

course: $(READY)  ## regenerate notebooks/ and solutions/ from autograder/course/source/
	$(BIN)/python -m autograder build

check-course: $(READY)  ## fail if notebooks/ or solutions/ differ from a fresh build
	$(BIN)/python -m autograder build --check

bench: $(READY)  ## print the performance table
	$(BIN)/python -m benchmarks

clean:  ## remove .venv and the caches (never the class's data in autograder/course/)
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis artifacts
