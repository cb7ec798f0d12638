# Crash, Resume, Don't Charge Twice. The two commands: `make lab` and `make test`
# (your notebooks, graded test by test); `make test-all` is the course's own suite.
# Both set everything up on a fresh machine (a .venv from constraints.txt).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
EXTRAS ?= postgres,agents,browser
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: setup lab test test-all test-fast crashtest bench mutants release check lint lock clean help

help:
	@echo "Learners"
	@echo "make setup      the course's .venv from constraints.txt (lab, test and check do it first)"
	@echo "make lab [WEEK=5] [ROLE=instructor] [LAB_ARGS='--no-browser --port=9999']"
	@echo "                open the course in JupyterLab at week 5 (default: week 1; sets everything"
	@echo "                up first); ROLE=instructor adds nbgrader's Formgrader and Create Assignment,"
	@echo "                LAB_ARGS goes to jupyter lab as it is"
	@echo "make test [WEEK=5] [K=resume] [ARGS=-v]   your notebooks' graded tests (hidden ones too);"
	@echo "                ARGS=-v names each test as it passes"
	@echo "make check [WEEK=5 [SUBMISSION=dir]]   grade your own notebooks (every week you started, without WEEK)"
	@echo "make site       the course as a website, with the notebooks' real outputs and no answers:"
	@echo "                website/_build/html/index.html (weeks whose notebooks did not change are not run again)"
	@echo "make claude-cli install week 7's real Claude Code CLI, pinned (npm ci, about 400 MB)"
	@echo ""
	@echo "Instructors (docs/instructors.md; WEEK=N is required unless shown in brackets)"
	@echo "make roster FILE=students.csv    the class list into the gradebook (id,first_name,last_name,email[,lms_user_id])"
	@echo "make release [WEEK=5]            regenerate week*/ from solutions/ and register them in gradebook.db"
	@echo "make due WEEK=5 DUE='2026-12-10 17:00 UTC'   a week's due date"
	@echo "make extend WEEK=5 STUDENT=bo HOURS=48       nbgrader's extension for one student (HOURS=0 removes it)"
	@echo "make to-students WEEK=5          hand the week out through nbgrader's exchange"
	@echo "make collect WEEK=5              the exchange's submissions into submitted/"
	@echo "make collect-lms WEEK=5 FILE=submissions.zip [PATTERN=regex]   an LMS's download into submitted/"
	@echo "make grade WEEK=5 [STUDENT=id]   grade submitted/*/week5/ in parallel, sandboxed; grades/week5.csv"
	@echo "make feedback WEEK=5             feedback/ again from the gradebook (after grading by hand)"
	@echo "make return-feedback WEEK=5 [ANYWAY=1]   release the feedback; names who is left out and why"
	@echo "make export WEEK=5               grades/week5.csv and grades/week5-canvas.csv (an LMS import)"
	@echo "make student-edition DEST=dir    the repository a graded class clones (no solutions)"
	@echo "make hub-deps    the class JupyterHub's own environment (docs/instructors.md)"
	@echo ""
	@echo "Contributors (docs/contributing.md)"
	@echo "make test-all   every test of the course itself (CI; 10 to 15 minutes on 2 cores)"
	@echo "make test-fast  the same without the slow and the browser tests"
	@echo "make crashtest  kill the CloudWave graph at every node and point, and fuzz it"
	@echo "make bench      measure the costs side by side"
	@echo "make mutants [ONLY='name ...']   plant known bugs one at a time; which tests catch each"
	@echo "make lint       ruff over course, tests, bench, scripts and solutions"
	@echo "make lock       re-resolve constraints.txt (as an unprivileged user)"
	@echo "make browser-deps / make sandbox-deps / make site-deps   Chromium, bubblewrap, the site's tools"
	@echo "make clean      remove .venv and every run's and grading's leftovers"
	@echo "make help       this list"

setup: $(STAMP)
	@$(SUPPORTED)

# pip first, to the version constraints.txt pins: the pip a new venv has (23.x) took 35 s
# of CPU to resolve the pins, pip 26.3 takes 12. After the install, a one-line .pth makes
# every interpreter of the venv import rfc3987_syntax (a ~2 s parser build jsonschema pulls
# in) only when an IRI is first checked: course/base/lazy_rfc3987.py says why. Rewritten
# only when it differs. The two warning filters hide notes, not problems: setuptools' "an
# editable install was made" (pip 26 prints it even with --quiet) and runpy's "the module
# was already imported" (by that .pth, on the second run).

# Before anything installs, scripts/supported.py says in one line what to do when this Python
# or this system cannot run the course (course/base/platform.py holds the range: the README's
# "Where it runs"); lab, test and check ask it too (20 ms). It asks the venv's Python once
# there is one.
SUPPORTED = py=$(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON)); \
	if "$$py" -c '' >/dev/null 2>&1; then "$$py" scripts/supported.py $(ASKED); \
	elif python3 -c '' >/dev/null 2>&1; then python3 scripts/supported.py --missing "$$py"; \
	else echo "make: no $$py here, and no python3: install Python (the README's 'Where it \
	runs' says which), then make setup PYTHON=<that python>" >&2; exit 2; fi
# A Python named on the command line while the environment exists: supported.py says if the
# environment holds another one (make clean first), rather than make's "Nothing to be done".
ASKED = $(if $(and $(wildcard $(BIN)/python),$(filter command line,$(origin PYTHON))),--asked '$(PYTHON)')

$(STAMP): pyproject.toml constraints.txt Makefile
	@$(SUPPORTED)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt pip
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install --quiet \
		--disable-pip-version-check -c constraints.txt -e '.[$(EXTRAS)]'
	$(BIN)/python -W ignore::RuntimeWarning -m course.base.lazy_rfc3987 install-pth
	@touch $(STAMP)

# `make site`: the course as a static website (website/build.py says how: each week's solution
# run headless, its outputs on the release's cells, Sphinx + MyST-NB, then the leak search).
# Its tools are the `site` extra, installed here on first use rather than by `make setup`:
# a learner who never builds the site does not download them.
SITE_STAMP := $(VENV)/.installed-site
.PHONY: site site-deps
site-deps: $(SITE_STAMP)
$(SITE_STAMP): $(STAMP)
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install --quiet \
		--disable-pip-version-check -c constraints.txt -e '.[$(EXTRAS),site]'
	@touch $(SITE_STAMP)
site: setup site-deps
	$(BIN)/python -m website.build
test-all: site-deps

# `make lab` opens week WEEK's notebook (default: the first week's) as a learner: nbgrader's
# Validate and Assignments, not its instructor tools. ROLE=instructor adds the Formgrader and
# Create Assignment (course/classroom/lab.py; the settings are in course/classroom/jupyter/,
# used for this server only). LAB_ARGS goes to `jupyter lab` as it is, e.g.
# LAB_ARGS='--no-browser --port=9999'.
lab: setup
	@$(SUPPORTED)
	$(BIN)/python -m course.classroom.lab $(if $(WEEK),--week '$(WEEK)') \
		$(if $(ROLE),--role '$(ROLE)') $(LAB_ARGS)

# Tests run in parallel, one file per worker at a time (a file's module fixtures, such as a
# week's grading pipeline, run once); TEST_WORKERS=1 runs them in one process. One worker
# more than the cores: every file also waits on kernels, servers and the browser, and the
# extra worker fills those gaps (2 cores: 8m31s with 2 workers, 7m22s with 3, 7m44s with 4).
TEST_WORKERS ?= $(shell echo $$(( $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1) + 1 )))
PYTEST := $(BIN)/python -m pytest -q $(if $(filter 1,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

# `make test` is the learner's: pytest collects the graded tests of each weekN/weekN.ipynb
# (course/grader/learner.py), grades a started week as `make check` does and skips the
# rest; WEEK=5 checks one week, K=resume picks tests by name, ARGS='-x' passes options on
# (ARGS=-v drops the -q, so each test is named with its result).
# The installed pytest plugins (xdist, anyio, ...) are the course suite's, not needed here:
# not loading them halves a fresh clone's run (0.21 s against 0.39 s).
WEEK_FOLDERS = $(if $(WEEK),week$(WEEK),$(patsubst %/,%,$(sort $(wildcard week[0-9]*/))))
test: setup
	@$(SUPPORTED)
	@PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(BIN)/python -m pytest -p course.grader.learner \
		$(if $(findstring -v,$(ARGS)),,-q) \
		-rfE $(WEEK_FOLDERS) $(if $(K),-k '$(K)') $(ARGS) || { status=$$?; \
		test $$status != 5 || echo "make test: no test of $(WEEK_FOLDERS) matches K='$(K)'" >&2; \
		exit $$status; }

# Where PYTHONDONTWRITEBYTECODE is set (as on the CI machine) no process caches course/'s
# bytecode, and each of the run's kernels and interpreters would compile it again (importing
# the course: 1.10 s of CPU against 0.92 s with the bytecode cached). Compiled here once;
# compileall skips what is up to date.
test-all: setup
	@$(BIN)/python -m compileall -q course
	$(PYTEST)

# The browser tests (tests/browser/) drive Debian's Chromium, and the grading sandbox is
# Debian's bubblewrap: installed here when missing (as root with apt-get); otherwise the
# script says how, the browser tests skip and grading says it runs without the sandbox.
.PHONY: browser-deps sandbox-deps
browser-deps:
	@bash scripts/ensure-package.sh chromium chromium "the browser tests (tests/browser/)"
sandbox-deps:
	@bash scripts/ensure-package.sh bwrap bubblewrap "the grading sandbox (make grade)"
test-all: browser-deps sandbox-deps
grade: sandbox-deps

# JupyterHub for tests/test_jupyterhub.py: an environment of its own that every account can
# run (course.term.hub), built once per set of pins; when it is there, a stamp check.
# When it cannot be installed it says why in one line and the hub tests skip (fail in CI).
.PHONY: hub-deps
hub-deps: setup
	@$(BIN)/python -m course.term.hub ensure
test-all: hub-deps

# Week 7's real Claude Code CLI (course.travel.cli): @anthropic-ai/claude-code pinned by
# scripts/claude/package-lock.json, installed with npm ci into a folder every account can
# read (about 400 MB, so make setup does not fetch it); when it is there, a stamp check.
# Without npm it says why in one line; week 7 then runs the stand-in and the real-CLI tests
# skip (fail in CI).
.PHONY: claude-cli
claude-cli: setup
	@$(BIN)/python -m course.travel.cli ensure
test-all: claude-cli

test-fast: setup
	$(PYTEST) -m "not slow and not browser"

crashtest: setup
	$(BIN)/python -m course.crash matrix --graph naive
	$(BIN)/python -m course.crash matrix --graph keyed
	$(BIN)/python -m course.crash fuzz --graph keyed --kills 1000 --seed 1 --strict
	$(BIN)/python -m course.crash fuzz --graph keyed --kills 1000 --seed 1 --fault pause --strict

bench: setup
	$(BIN)/python -m bench

mutants: setup
	$(BIN)/python scripts/mutants.py $(if $(ONLY),--only $(ONLY))

# Week notebooks: weekN/ is generated from solutions/weekN/ (nbgrader generate_assignment);
# check grades a folder with nbgrader autograde in a throwaway course (hidden tests included).
INSTRUCTOR = $(BIN)/python -m course.term.instructor
release: setup
	$(INSTRUCTOR) release $(if $(WEEK),--week $(WEEK))

# The instructor's steps (docs/instructors.md): WEEK=N is required.
WORKERS ?= $(shell nproc 2>/dev/null || echo 2)
.PHONY: to-students collect grade feedback return-feedback export student-edition
to-students collect feedback export: setup
	@test -n "$(WEEK)" || { echo "make $@: give the week, e.g. make $@ WEEK=5" >&2; exit 2; }
	$(INSTRUCTOR) $@ --week $(WEEK) $(if $(DB_URL),--db-url $(DB_URL))
grade: setup
	@test -n "$(WEEK)" || { echo "make grade: give the week, e.g. make grade WEEK=5" >&2; exit 2; }
	$(INSTRUCTOR) grade --week $(WEEK) --workers $(WORKERS) $(if $(DB_URL),--db-url $(DB_URL)) \
		$(foreach s,$(STUDENT),--student $(s))
.PHONY: roster due collect-lms extend
# An LMS's download (a zip of the class's notebooks) into submitted/ with nbgrader's
# zip_collect (course/term/lms.py: the file names it reads, PATTERN for others).
collect-lms: setup
	@test -n "$(WEEK)" -a -n "$(FILE)" || { echo "make collect-lms: give the week and the download, e.g. make collect-lms WEEK=5 FILE=submissions.zip" >&2; exit 2; }
	$(INSTRUCTOR) collect-lms --week $(WEEK) --file '$(FILE)' $(if $(PATTERN),--pattern '$(PATTERN)') $(if $(DB_URL),--db-url $(DB_URL))
# nbgrader's extension (Gradebook.grant_extension): HOURS past the due date for STUDENT.
extend: setup
	@test -n "$(WEEK)" -a -n "$(STUDENT)" -a -n "$(HOURS)" || { echo "make extend: give the week, the student and the hours, e.g. make extend WEEK=5 STUDENT=bo HOURS=48" >&2; exit 2; }
	$(INSTRUCTOR) extend --week $(WEEK) --student '$(STUDENT)' --hours $(HOURS) $(if $(DB_URL),--db-url $(DB_URL))
roster: setup
	@test -n "$(FILE)" || { echo "make roster: give the class list, e.g. make roster FILE=students.csv (columns id,first_name,last_name,email)" >&2; exit 2; }
	$(INSTRUCTOR) roster --file $(FILE) $(if $(DB_URL),--db-url $(DB_URL))
due: setup
	@test -n "$(WEEK)" -a -n "$(DUE)" || { echo "make due: give the week and the date, e.g. make due WEEK=5 DUE='2026-12-10 17:00 UTC'" >&2; exit 2; }
	$(INSTRUCTOR) due --week $(WEEK) --due "$(DUE)" $(if $(DB_URL),--db-url $(DB_URL))
return-feedback: setup
	@test -n "$(WEEK)" || { echo "make return-feedback: give the week, e.g. make return-feedback WEEK=5" >&2; exit 2; }
	$(INSTRUCTOR) return --week $(WEEK) $(if $(ANYWAY),--anyway) $(if $(DB_URL),--db-url $(DB_URL))
student-edition: setup
	@test -n "$(DEST)" || { echo "make student-edition: give a new folder, e.g. make student-edition DEST=../course-students" >&2; exit 2; }
	$(BIN)/python -m course.term.edition $(DEST)

check: setup
	@$(SUPPORTED)
	@test -z "$(SUBMISSION)" -o -n "$(WEEK)" || { echo "make check: SUBMISSION needs WEEK, e.g. make check WEEK=5 SUBMISSION=dir" >&2; exit 2; }
	$(BIN)/python -m course.grader $(if $(WEEK),--week $(WEEK)) $(if $(SUBMISSION),--submission $(SUBMISSION))

lint: setup
	$(BIN)/ruff check course tests bench scripts solutions

# Resolves as an unprivileged user (a student is never root): scripts/lock.py.
lock: setup
	$(BIN)/python scripts/lock.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache test-artifacts bench/results \
		submitted autograded feedback downloaded gradebook.db grades grades.csv
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
