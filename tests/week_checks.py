"""The checks every declared week gets, and the collector that adds them.

``tests/conftest.py`` collects every ``tests/test_weekN.py`` as a :class:`WeekModule`: the
module's own tests, then :class:`EveryWeek`'s checks for week N, which read the week's
declaration (``solutions/weekN/week.toml``) and answer files, and its one grading run
(:mod:`week_pipeline`). A week folder without a declaration, or a declaration that
disagrees with its notebook, is a collection error naming the file.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
from week_answers import answers_used_across_exercises, delegations, unmatched_references
from week_pipeline import (
    Pipeline,
    assert_says_why,
    forked_answers,
    nbgrader_metadata_problems,
    release_leaks,
    sameish,
)
from weeks import code_cells_with_outputs, errors_in, output_text, release_of, submission

from course.grader.declaration import load
from course.grader.known_answers import answers
from course.grader.week import Answer, DeclarationError, Week

WEEK_MODULE = re.compile(r"test_week(\d+)\.py")


def week_number(module_name: str) -> int:
    return int(WEEK_MODULE.fullmatch(Path(module_name).name).group(1))


class WeekModule(pytest.Module):
    """``tests/test_weekN.py``: its own tests, then :class:`EveryWeek`'s for week N. Fails
    collection, naming the file, when the week's declaration is missing or wrong."""

    def collect(self):
        try:
            self.declared = load(week_number(self.path.name))
        except DeclarationError as error:
            raise self.CollectError(str(error)) from None
        yield from super().collect()
        yield WeekChecks.from_parent(self, name="EveryWeek")


class WeekChecks(pytest.Class):
    """:class:`EveryWeek`, less the tests that do not apply to this week (``applies``)."""

    def _getobj(self):
        return EveryWeek

    def collect(self):
        week = self.parent.declared
        for item in super().collect():
            applies = getattr(getattr(item, "function", None), "applies", None)
            if applies is None or applies(week):
                yield item


def applies(condition: Callable[[Week], bool]):
    """Mark an :class:`EveryWeek` test that only some weeks run."""
    def mark(function):
        function.applies = condition
        return function
    return mark


def parametrize_answers(metafunc) -> None:
    """``pytest_generate_tests`` for :class:`EveryWeek`: ``wrong``/``right``/``delegation``
    run once per such answer of the module's week."""
    wanted = [n for n in ("wrong", "right", "delegation") if n in metafunc.fixturenames]
    if not wanted:
        return
    week = load(week_number(metafunc.module.__file__))
    known = answers(week)
    names = {"wrong": [n for n, a in known.items() if not a.right],
             "right": [n for n, a in known.items() if a.right],
             "delegation": list(delegations(week))}[wanted[0]]
    metafunc.parametrize(wanted[0], names)


class EveryWeek:
    """What every declared week must show (the week's number: its module's name)."""

    @pytest.mark.parametrize("kind", ["solution", "release"])
    def test_committed_notebooks_have_no_outputs(self, declared, kind):
        path = declared.notebook if kind == "solution" else release_of(declared.number)
        assert code_cells_with_outputs(path) == [], "clear the outputs before committing"

    def test_the_notebooks_nbgrader_metadata_is_sound_and_references_exist(self, declared):
        from course.grader.consistency import reference_problems

        problems = nbgrader_metadata_problems(declared) + reference_problems(declared)
        assert problems == [], problems

    def test_the_release_hides_solutions_hidden_tests_and_model_answers(self, declared):
        problems = release_leaks(declared, release_of(declared.number))
        assert problems == [], problems

    def test_every_exercise_has_wrong_answers_and_every_reference_a_delegation(self, declared,
                                                                               tmp_path):
        known = answers(declared)
        count = defaultdict(int)
        for answer in known.values():
            count[answer.exercise] += not answer.right
            submission(declared.notebook, tmp_path / answer.name, answer.cells)
        short = {e.number: count[e.number] for e in declared.exercises
                 if count[e.number] < declared.checks.at_least}
        assert short == {}, f"exercises with fewer than {declared.checks.at_least} wrong answers"
        assert unmatched_references(declared) == []

    def test_each_exercises_most_common_wrong_answer_fails_a_visible_test(self, declared):
        """The learner hears about the common mistake from Validate, in the lab. The
        grading pipeline checks each answer fails exactly its declared tests, so the
        declaration read here is the graded truth; the message lists every exercise's
        wrong answers and which of them fail visibly."""
        from course.grader.known_answers import answers_table, visibility_problems

        known = answers(declared)
        problems = visibility_problems(declared, known)
        assert problems == [], "\n".join(problems) + "\n" + answers_table(declared, known)

    @applies(lambda week: not week.checks.cross_exercise)
    def test_no_exercise_is_graded_through_another_exercises_answer(self, declared):
        """What makes grading wrong answers in bundles (one per exercise) sound."""
        problems = answers_used_across_exercises(declared)
        assert problems == [], problems

    @applies(lambda week: week.checks.cross_exercise)
    def test_its_tests_do_read_other_exercises_answers(self, declared):
        """``cross_exercise`` is declared only where it is true (it turns bundling off)."""
        assert answers_used_across_exercises(declared) != []

    @pytest.mark.slow
    def test_the_committed_release_is_what_generate_assignment_makes(self, pipeline):
        number = pipeline.week.number
        fresh = pipeline.course / f"week{number}" / f"week{number}.ipynb"
        assert json.loads(fresh.read_text()) == json.loads(release_of(number).read_text()), (
            f"week{number}/ is out of date: run `make release` and commit week{number}/")

    @pytest.mark.slow
    def test_the_solution_runs_headless_without_errors_and_shows_the_demos(self, pipeline):
        executed = pipeline.executed_solution
        errors = errors_in(executed)
        assert errors == [], errors
        text = output_text(executed)
        missing = [shown for shown in pipeline.week.demos if shown not in text]
        assert missing == [], f"the executed solution does not show {missing}:\n{text[-6000:]}"

    @pytest.mark.slow
    def test_the_solution_gets_full_marks(self, pipeline):
        week, solution = pipeline.week, pipeline.reports["solution"]
        assert [t.grade_id for t in solution.failed()] == [], "\n".join(solution.lines())
        summary = f"week{week.number}: {week.total:g}/{week.total:g}"
        assert solution.summary() == solution.lines()[-1] == summary, solution.lines()[-1]
        assert [w[2] for w in solution.written] == [w.points for w in week.written]

    @pytest.mark.slow
    def test_make_check_on_the_untouched_release_prints_zero(self, pipeline):
        """What `make check WEEK=N` runs on a fresh clone."""
        week, done = pipeline.week, pipeline.jobs["blank"]
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1] == f"week{week.number}: 0/{week.total:g}"
        # every failing test says the exercise is not done, not the NameError its test
        # cell raised for a name the blank answer cell never defined
        said = [line.strip() for line in done.stdout.splitlines() if line.startswith("      ")]
        assert said and set(said) == {
            "NotImplementedError: the exercise is not done yet (YOUR CODE HERE)"}, said
        # rows name their test, without the exercise's total; the written answers' rubric;
        # the time it took, not a promise
        rows = [line for line in done.stdout.splitlines() if line.startswith("  FAIL")]
        assert rows and all(" test of " in row and "points)" not in row for row in rows), rows
        assert f"grade them yourself: rubrics/week{week.number}.md" in done.stdout
        assert "graded in " in done.stdout and "half a minute" not in done.stdout

    @pytest.mark.slow
    def test_a_wrong_answer_loses_points_on_its_own_exercise(self, pipeline, wrong):
        answer = answers(pipeline.week)[wrong]
        if wrong in pipeline.bundle_of:
            failed = _failed_in_bundle(pipeline, answer)
        else:
            failed = _failed_forked(pipeline, answer)
        assert set(failed) == answer.fails, (
            f"{wrong}: failed {sorted(failed)}, expected {sorted(answer.fails)}")
        assert_says_why(pipeline.week, wrong, failed)
        if answer.says:
            assert any(answer.says in m for m in pipeline.messages_of(answer)), (
                f"{wrong}: no failed test says {answer.says!r}")

    @pytest.mark.slow
    @applies(lambda week: any(a.right for a in answers(week).values()))
    def test_a_right_answer_written_differently_gets_full_marks(self, pipeline, right):
        """Graded by nbgrader where the week forks nothing, else in a forked check."""
        if right in pipeline.bundle_of:
            report = pipeline.reports[pipeline.bundle_of[right]]
            lost = {t.grade_id: t.message for t in report.failed()}
            assert report.earned == pipeline.week.total, "\n".join(report.lines())
        else:
            lost = _failed_forked(pipeline, answers(pipeline.week)[right])
        assert lost == {}, f"{right} is right, yet it lost points: {lost}"

    @pytest.mark.slow
    @applies(lambda week: bool(delegations(week)))
    def test_an_answer_that_calls_the_courses_reference_loses_points(self, pipeline,
                                                                     delegation):
        answer = delegations(pipeline.week)[delegation]
        failed = _failed_forked(pipeline, answer)
        assert failed, f"{delegation} ({answer.why}) lost nothing"
        assert_says_why(pipeline.week, delegation, failed)

    @pytest.mark.slow
    def test_wrong_answers_lose_nothing_outside_their_exercises(self, pipeline):
        known, found = answers(pipeline.week), {}
        for bundle in set(pipeline.bundle_of.values()):
            report = pipeline.reports[bundle]
            explained = set().union(*(known[n].fails for n, b in pipeline.bundle_of.items()
                                      if b == bundle))
            failed = {t.grade_id for t in report.failed()}
            lost = sum(t.points for t in report.tests if t.grade_id in failed)
            if (failed != explained or any(t.timed_out for t in report.tests)
                    or report.earned != pipeline.week.total - lost):
                found[bundle] = (sorted(failed), sorted(explained), report.earned)
            lines = "\n".join(report.lines())
            assert "BEGIN HIDDEN TESTS" not in lines and "_problems" not in lines, bundle
        assert found == {}, found

    @pytest.mark.slow
    def test_the_forked_checks_agree_with_nbgrader(self, pipeline):
        """Every answer both graded and forked fails the same tests of its exercise, saying
        the same thing. So does the solution's own answer to each forked exercise, which
        nbgrader gives full marks: no test fails in its child either. And the run the
        checks forked from is the solution's, with no error."""
        probe = pipeline.jobs["probe"]
        assert probe.returncode == 0, probe.stderr[-3000:]
        assert errors_in(pipeline.probed) == [], errors_in(pipeline.probed)
        assert [t.grade_id for t in pipeline.reports["solution"].failed()] == []
        known = answers(pipeline.week)
        forked = forked_answers(pipeline.week, known)
        for number in sorted({answer.exercise for answer in forked.values()}):
            assert _failed_forked(pipeline, Answer(f"solution-ex{number}", number, {},
                                                   frozenset())) == {}, number
        for name, bundle in pipeline.bundle_of.items():
            if name not in forked:
                continue
            own = set(pipeline.week.exercise(known[name].exercise).tests)
            graded_said = {t.grade_id: sameish(t.message)
                           for t in pipeline.reports[bundle].failed() if t.grade_id in own}
            forked_said = {g: sameish(m) for g, m in pipeline.forked_failures(name).items()}
            assert forked_said == graded_said, (name, forked_said, graded_said)


def _failed_forked(pipeline: Pipeline, answer: Answer) -> dict[str, str]:
    """The forked check of ``answer``: it ran exactly its exercise's tests; what failed."""
    ran = set(pipeline.forked.get(answer.name, {}).get("tests", {}))
    own = set(pipeline.week.exercise(answer.exercise).tests)
    assert ran == own, f"{answer.name}: the forked check ran {sorted(ran)}, not {sorted(own)}"
    return pipeline.forked_failures(answer.name)


def _failed_in_bundle(pipeline: Pipeline, answer: Answer) -> dict[str, str]:
    """In its submission: the tests ``answer`` failed beyond those its companions must
    fail; and it lost exactly those tests' points of its exercise."""
    known = answers(pipeline.week)
    bundle = pipeline.bundle_of[answer.name]
    report = pipeline.reports[bundle]
    others = set().union(*(known[n].fails for n, b in pipeline.bundle_of.items()
                           if b == bundle and n != answer.name))
    every_failed = {t.grade_id: t.message for t in report.failed()}
    failed = {g: m for g, m in every_failed.items() if g not in others}
    own = [t for t in report.tests if t.grade_id in pipeline.week.exercise(answer.exercise).tests]
    lost = sum(t.points for t in own if t.grade_id in every_failed)
    assert sum(t.earned for t in own) == sum(t.points for t in own) - lost, answer.name
    return failed
