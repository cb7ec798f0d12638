"""One grading group, in its worker process: nbgrader's autograde and feedback for a few
students in a throwaway course folder of its own.

``make grade`` (:mod:`course.term.classgrade`) starts :data:`WORKER` once per group with
a job (the week, the repository, the group's course folder, its students' submission
folders, the cell time limit). :func:`grade_group` promises, in that folder only (never
the repository's gradebook): every submission autograded by
:func:`course.grader.autograde.grade` (sandboxed when ``COURSE_GRADING_SANDBOX`` says
so), its feedback made, each submission's own files put next to its autograded notebook
and feedback (:func:`finish_files`, then the :data:`FINISHED` mark), and last
``reports.json`` beside the folder: what each student's grading said. No
``reports.json`` means nbgrader stopped for the whole group.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from course.grader.speedups import throwaway_gradebook
from course.term.coursedir import course_config, run_converter, tools_on_path

WORKER = """
import json, sys
from pathlib import Path
from course.term.worker import grade_group
grade_group(json.loads(sys.argv[1]))
"""


FINISHED = ".files-finished"  # in a group's course folder: finish_files has run


def grade_group(job: dict) -> None:
    """In a worker process: autograde + feedback for one group in its own course folder,
    then write ``reports.json`` next to it."""
    from course.grader.autograde import grade

    tools_on_path()
    course = Path(job["course"])
    reports = grade(job["week"], {s: Path(f) for s, f in job["folders"].items()},
                    repo=Path(job["repo"]), keep=course, timeout_s=job.get("timeout_s"))
    config = course_config(Path(job["repo"]))
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.db_url = f"sqlite:///{course / 'gradebook.db'}"
    with throwaway_gradebook(course):
        run_converter("generate_feedback", config, f"week{job['week']}")
    finish_files(course, job["week"], job["folders"])
    (course.parent / "reports.json").write_text(json.dumps({
        name: {"summary": r.summary(), "earned": r.earned, "total": r.total,
               "kernel_died": r.kernel_died, "stopped": r.stopped, "conformed": r.conformed,
               "flags": r.flags,
               "failed": [[t.grade_id, t.message] for t in r.failed()]}
        for name, r in reports.items()}))


def finish_files(course: Path, week: int, folders: dict[str, str], mark: bool = True) -> None:
    """In the worker, once feedback is made: each submission's own files next to its
    autograded notebook and its feedback, so that :func:`course.term.merge.merge`
    (serial, in the main process) only copies folders. (The rubric cells are already in
    the autograded notebooks: :class:`course.term.rubric.AddRubric` is an autograde step.)"""
    assignment = f"week{week}"
    for student, folder in folders.items():
        _copy_submission_files(Path(folder), [course / name / student / assignment
                                              for name in ("autograded", "feedback")])
    if mark:
        (course / FINISHED).touch()


def _copy_submission_files(submitted: Path, targets: list[Path]) -> None:
    """Put the submission's own files (``timestamp.txt``, nbgrader's ``submission_secret.txt``)
    next to its autograded notebook and its feedback, as nbgrader's autograde does:
    ``release_feedback`` needs them."""
    for name in ("timestamp.txt", "submission_secret.txt"):
        for target in targets:
            if (submitted / name).is_file() and target.is_dir():
                shutil.copy2(submitted / name, target / name)
