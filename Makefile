# Crash, Resume, Don't Charge Twice. The two commands: `make lab` and `make test`.
# Both set everything up on a fresh machine (a .venv from constraints.txt).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
EXTRAS ?= postgres,browser
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: setup lab test test-fast crashtest bench mutants release check lint lock clean help

help:
	@echo "make lab        open the course in JupyterLab (sets everything up first)"
	@echo "make test       run every test (notebooks, nbgrader, crashes, browser)"
	@echo "make check [WEEK=5 [SUBMISSION=dir]]   grade your own notebooks (every week without WEEK)"
	@echo "make crashtest  kill the CloudWave graph at every node and point, and fuzz it"
	@echo "make bench      measure the costs side by side"
	@echo "make mutants [ONLY='name ...']   plant known bugs one at a time; which tests catch each"
	@echo "make release    regenerate week*/ from solutions/ (instructors)"

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[$(EXTRAS)]'
	@touch $(STAMP)

lab: setup
	$(BIN)/python -m course.classroom.lab $(LAB_ARGS)

test: setup
	$(BIN)/python -m pytest -q

# The browser tests (tests/browser/) drive Debian's Chromium: installed here when
# missing (as root with apt-get); otherwise the script says how and they skip.
.PHONY: browser-deps
browser-deps:
	@bash scripts/ensure-chromium.sh
test: browser-deps

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow and not browser"

crashtest: setup
	$(BIN)/python -m course.crash matrix --graph naive
	$(BIN)/python -m course.crash matrix --graph keyed
	$(BIN)/python -m course.crash fuzz --graph keyed --kills 1000 --seed 1 --strict

bench: setup
	$(BIN)/python -m bench

mutants: setup
	$(BIN)/python scripts/mutants.py $(if $(ONLY),--only $(ONLY))

# Week notebooks: weekN/ is generated from solutions/weekN/ (nbgrader generate_assignment);
# check grades a folder with nbgrader autograde in a throwaway course (hidden tests included).
release: setup
	$(BIN)/python -m course.grading --release $(if $(WEEK),--week $(WEEK))

check: setup
	@test -z "$(SUBMISSION)" -o -n "$(WEEK)" || { echo "make check: SUBMISSION needs WEEK, e.g. make check WEEK=5 SUBMISSION=dir" >&2; exit 2; }
	$(BIN)/python -m course.grading $(if $(WEEK),--week $(WEEK)) $(if $(SUBMISSION),--submission $(SUBMISSION))

lint: setup
	$(BIN)/ruff check course tests bench

lock:
	rm -rf /tmp/crash-resume-lock && $(PYTHON) -m venv /tmp/crash-resume-lock
	/tmp/crash-resume-lock/bin/pip install --quiet -e '.[postgres,agents,browser]'
	{ echo "# Pinned from a real resolve of '.[postgres,agents,browser]' on Python 3.11 (pip freeze)."; \
	  echo "# make setup installs with -c constraints.txt; regenerate with 'make lock'."; \
	  /tmp/crash-resume-lock/bin/pip freeze --exclude-editable | grep -v -i '^crash-resume-course'; \
	} > constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache test-artifacts bench/results \
		submitted autograded feedback gradebook.db
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
