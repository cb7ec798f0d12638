#!/usr/bin/env bash
# Make sure a Debian package's program is installed: ensure-package.sh PROGRAM PACKAGE WHAT
#   chromium   chromium     "the browser tests (tests/browser/)"
#   bwrap      bubblewrap   "the grading sandbox (course/sandbox/jail.py)"
#
# Promise: when PROGRAM is already on PATH, do nothing and exit 0. Otherwise, when
# running as root on a machine with apt-get, install the Debian package PACKAGE (never a
# tool's own download) and exit 0 if it worked. When it cannot be installed (not root,
# no apt-get, apt failed), print one clear line saying why and how to fix it, and still
# exit 0: what needs it then says so itself (the browser tests skip on a student's
# machine and fail in CI; `make grade` grades without the sandbox and says why).
#
# Called by `make test-all` and `make grade`. Safe to run any number of times.
set -u
program=$1 package=$2 what=$3

if command -v "$program" >/dev/null 2>&1; then
    exit 0
fi

say() { echo "ensure-package: $*" >&2; }

if ! command -v apt-get >/dev/null 2>&1; then
    say "$package is not installed and there is no apt-get here; install it yourself" \
        "for $what."
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    say "$package is not installed; run 'sudo apt-get install -y $package' for $what."
    exit 0
fi

say "installing Debian's $package with apt-get (once), for $what..."
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! apt-get install -y --no-install-recommends "$package" >"$log" 2>&1; then
    # The package lists may be missing or stale on a fresh machine: refresh once.
    if ! { apt-get update >>"$log" 2>&1 &&
           apt-get install -y --no-install-recommends "$package" >>"$log" 2>&1; }; then
        say "apt-get could not install $package; the last lines of its output:"
        tail -n 15 "$log" >&2
        rm -f "$log"
        exit 0
    fi
fi
rm -f "$log"
if command -v "$program" >/dev/null 2>&1; then
    say "installed $package."
else
    say "apt-get finished but '$program' is still not on PATH."
fi
exit 0
