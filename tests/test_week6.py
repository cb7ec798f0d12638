"""Week 6: its own tests.

The checks every declared week gets (``tests/week_checks.py``, from
``solutions/week6/week.toml`` and its answer files in ``solutions/week6/answers/``) are
collected here by ``tests/conftest.py``;
this module holds week 6's own tests.
"""

from __future__ import annotations

from collections import Counter

import pytest
from fixtures_pg import in_ci
from weeks import NBGRADER_WARNINGS, output_text

from course.grader.known_answers import answers

pytestmark = NBGRADER_WARNINGS




# ------------------------------------------------------------ week 6's own checks
def test_every_exercise_has_as_many_known_answers_as_it_had(declared):
    """At least two wrong answers per exercise, 39 answers in all; the reworked exercises 3
    and 7 also have right answers written other ways (exercise 3 two: one forks from the
    latest of each changed field's earliest step)."""
    known = answers(declared).values()
    assert Counter(w.exercise for w in known if not w.right) == {
        1: 5, 2: 6, 3: 10, 4: 4, 5: 3, 6: 4, 7: 4}
    assert sorted(a.exercise for a in known if a.right) == [3, 3, 7]


@pytest.mark.slow
def test_the_solution_keeps_its_promises_and_runs_postgres_in_ci(pipeline):
    text = output_text(pipeline.executed_solution)
    assert "Keep the thread" not in text  # the budget demo's reason agrees with its delete
    if "No PostgreSQL here" in text:
        assert not in_ci(), "CI must run the PostgreSQL demos, not skip them"
    else:
        assert "ledger    charges=1 emails=1" in text  # the restart drill
        assert "1 resumed, 7 in_progress_elsewhere; charges=1 emails=1" in text


@pytest.mark.slow
def test_feedback_names_every_mistake(pipeline, declared):
    """What a student is told names each mistake: the bundled answers' feedback, and the
    messages the others' tests gave in their forked checks (worded as the feedback words
    them; the agreement test holds the two together)."""
    graded = sorted(set(pipeline.bundle_of.values()))
    said = "\n".join([line for bundle in graded for line in pipeline.reports[bundle].lines()]
                     + [message for answer in answers(declared).values()
                        if answer.name not in pipeline.bundle_of
                        for message in pipeline.messages_of(answer)])
    for words in ("is not escalated", "the charge that landed was not settled",
                  "the customer was told 0 time(s)", "did the fork start before the charge",
                  "the version of the model running now", "not its position in the list",
                  "must outlive the process", "would not survive a deploy",
                  "calls the course's own policy", "instead of being moved aside",
                  "not the state the fork's run ended with", "the course's own tools",
                  "a corrupt checkpoint is asked about first", "that was not a fork",
                  "merges two conversations into one payment",
                  "the reply itself says otherwise", "takes its memory and its disk",
                  "the fork started too late", "the fork started too early",
                  "the reason the instructions give for a damaged checkpoint file",
                  "(nothing damaged) was explained to the customer",
                  "finds nothing to resume from", "heavier than they need",
                  "budget_exhausted only"):
        assert words in said, words
    assert "BEGIN HIDDEN TESTS" not in said and "_reference_policy" not in said
    assert "_hands_over_to_the_course" not in said and "_watched_tools" not in said
