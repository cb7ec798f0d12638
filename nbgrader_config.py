"""nbgrader configuration for the course (read by every nbgrader command run here).

- ``solutions/weekN/`` holds the source notebooks (solutions, visible and hidden tests).
- ``nbgrader generate_assignment weekN`` (``make release``) writes the student
  notebooks to ``weekN/`` at the repository root.
- ``make check WEEK=N`` (``python -m course.grader``) grades in a throwaway
  course folder built from this same file, so the repository never gets a
  gradebook, ``submitted/`` or ``autograded/``.
"""

import os
from pathlib import Path

c = get_config()  # noqa: F821 - injected by traitlets when nbgrader loads this file
HERE = Path(__file__).resolve().parent

c.CourseDirectory.course_id = "crash-resume"  # used by the exchange (nbgrader collect)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "."
# A week's declaration and its known wrong and right answers (course/grader/declaration.py,
# course/grader/known_answers.py) sit beside its source notebook; nbgrader copies neither
# into a release or a submission.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
                            "week.toml", "answers"]

# The exchange nbgrader release_assignment / collect / release_feedback use. Default:
# exchange/ in this repository (git ignores it; `make to-students` creates it writable by
# every user); a class on a shared machine or a JupyterHub sets COURSE_EXCHANGE to a
# folder every account can reach, e.g. /srv/nbgrader/exchange.
c.Exchange.root = os.environ.get("COURSE_EXCHANGE") or str(HERE / "exchange")

# A cell that runs longer than this is stopped (the kernel is interrupted) and
# graded as failed; the rest of the notebook still runs. The solution's slowest
# cell (its imports) takes a few seconds.
TIMEOUT_S = 30
c.ExecutePreprocessor.timeout = TIMEOUT_S
c.ExecutePreprocessor.interrupt_on_timeout = True
c.Execute.error_on_timeout = {
    "ename": "CellTimeoutError",
    "evalue": f"this cell ran for more than {TIMEOUT_S} seconds and was stopped",
    "traceback": [
        f"CellTimeoutError: this cell ran for more than {TIMEOUT_S} seconds and was stopped.",
        "Look for a loop that never ends (a `while True` without a way out, or a retry",
        "loop that keeps retrying), fix it, and run the cell again.",
    ],
}
# Kill the kernel's whole process group when grading ends: a crash-test worker
# forked by a stopped cell must not outlive the grading run. Grading only: the Validate
# button (nbgrader's own Execute) shuts its kernel down gracefully, so the notebook's
# exit handler removes its scratch folder (course/base/scratch.py).
c.GradingExecute.shutdown_kernel = "immediate"

# Students sometimes delete a test cell; put it back before grading.
c.OverwriteCells.add_missing_cells = True

# nbgrader's autograde steps, with three of ours in place of nbgrader's own (and the
# rubric step, AddRubric, at the end):
# - RestoreCells: restores edited or deleted test cells exactly like OverwriteCells, but
#   stays quiet about the hidden tests (every hidden-test cell "changed" by design) and
#   names the student when a locked cell really was edited (course/grader/restore.py);
# - CheckCellMetadata: nbgrader's, checking its JSON schema once per process rather than
#   once per cell (course/grader/nbgrader_schema_once.py);
# - GradingExecute: nbgrader's Execute plus a budget for the whole notebook (one loop in
#   a helper that eight tests call costs the budget, not 8 x 30 s), test cells that the
#   notebook cannot neuter, and each kernel in a sandbox (course/sandbox/execute.py).
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "course.grader.restore.RestoreCells",
    "course.grader.nbgrader_schema_once.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "course.sandbox.execute.GradingExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "course.grader.nbgrader_schema_once.CheckCellMetadata",
    "course.term.rubric.AddRubric",
]
# The rubric under each written answer of the autograded notebook, for graders: the hub's
# formgrader and `make grade` both autograde through this list (course/term/rubric.py).
c.AddRubric.course_root = str(HERE)
# Late work: a week's due date is nbgrader's own (`make due WEEK=5 DUE='2026-12-10 17:00
# UTC'`, in the gradebook), the submission time is nbgrader's timestamp.txt. A late notebook
# loses PERCENT_PER_DAY of its score per started day (at most all of it), computed from its
# current score, hand grades included (course/term/late.py). 0 turns it off; nbgrader's
# own c.PercentPerDay.penalty_method = "zero" then scores every late notebook 0.
c.AssignLatePenalties.plugin_class = "course.term.late.PercentPerDay"
PERCENT_PER_DAY = 10
c.PercentPerDay.percent_per_day = PERCENT_PER_DAY

NOTEBOOK_BUDGET_S = 120
c.GradingExecute.notebook_budget = NOTEBOOK_BUDGET_S
# Each graded kernel runs in the allow-list sandbox wherever bubblewrap works: `make grade`,
# the hub's formgrader, nbgrader autograde by hand (course/sandbox/managers.py). `make
# check` turns it off for your own notebook; COURSE_GRADING_SANDBOX=on|off overrides.
c.GradingExecute.sandbox = "auto"

# Feedback shows which hidden test failed and what it said, never its code, and never
# the graders' rubric cells (course/term/feedback.py).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "course.term.feedback.HideHiddenTests",
]
# nbconvert's HTML exporter, minus a whole-page BeautifulSoup re-parse that only adds
# alt text to images: the same page in half the time (course/term/nbconvert_soup_pass.py).
c.GenerateFeedback.exporter_class = "course.term.nbconvert_soup_pass.FeedbackExporter"

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Each new gradebook makes nbgrader start the `alembic heads` program (a fresh interpreter,
# about 2.5 s of CPU) to learn its newest revision; the course reads the same answer from
# the same migration scripts in this process (course/grader/nbgrader_alembic_heads.py), so
# the formgrader and nbgrader's own commands skip it too.
from course.grader import speedups  # noqa: E402

speedups.install()
