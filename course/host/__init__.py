"""This machine's accounts: who runs a program when we are root, and what it may reach.

May import: :mod:`course.base`. Knows nothing about grading, storage or graphs; the
throwaway Postgres (:mod:`course.storage`), the grading sandbox, the class hub, week 7's
CLI cache and ``make lock`` all stand on it.

- :mod:`course.host.accounts`: the one unprivileged account (as root), how to run a
  program as it, and a student's part run as it in a bare environment.
- :mod:`course.host.reach`: what that account may read of a private folder (only the
  paths listed, in a mount namespace of its own).
- :mod:`course.host.checkout`: :func:`copy_tracked`, a repository's git-tracked files
  copied as a fresh clone has them.
"""
