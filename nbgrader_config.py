"""nbgrader configuration for the course (read by every nbgrader command run here).

- ``solutions/weekN/`` holds the source notebooks (solutions, visible and hidden tests).
- ``nbgrader generate_assignment weekN`` (``make release``) writes the student
  notebooks to ``weekN/`` at the repository root.
- ``make check WEEK=N`` (``python -m course.grading``) grades in a throwaway
  course folder built from this same file, so the repository never gets a
  gradebook, ``submitted/`` or ``autograded/``.
"""

c = get_config()  # noqa: F821 - injected by traitlets when nbgrader loads this file

c.CourseDirectory.course_id = "crash-resume"  # used by the exchange (nbgrader collect)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "."

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
# forked by a stopped cell must not outlive the grading run.
c.ExecutePreprocessor.shutdown_kernel = "immediate"

# Students sometimes delete a test cell; put it back before grading.
c.OverwriteCells.add_missing_cells = True

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
