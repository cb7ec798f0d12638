"""Submissions downloaded from an LMS (Canvas, Moodle, ...) into ``submitted/``, with
nbgrader's own ``zip_collect`` (``make collect-lms WEEK=N FILE=download.zip``).

nbgrader's ``zip_collect`` takes the files in ``downloaded/weekN/archive/``, unzips them
into ``downloaded/weekN/extracted/`` and asks a collector plugin, file by file, whose
notebook it is and when it was handed in; it then copies each notebook to
``submitted/<student>/weekN/`` and writes the ``timestamp.txt`` nbgrader's late rule
reads. :class:`LmsCollector` is that plugin. Its default pattern reads a file named

- ``<student>_<time>_week1.ipynb`` (``ada_2026-12-01T09-00-00Z_week1.ipynb``;
  ``20261201T090000Z`` works too; no zone means UTC),
- ``<student>_week1.ipynb``, or ``<student>/week1.ipynb`` (a folder per student),

with anything before the student's id in other folders (the LMS's own folder names).
An LMS whose names differ (Canvas puts its own user id and submission id in each name)
gets its own pattern with ``PATTERN='...'``: a regular expression over the file's whole
path with the groups ``student_id`` and ``file_id`` and, optionally, ``timestamp``
(nbgrader's ``FileNameCollectorPlugin.named_regexp``).

:func:`collect` runs it and then says, student by student, what came in: who has no
submission time (nbgrader then counts them on time), who is not on the class list, and
which files were skipped.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
from traitlets import Unicode

DEFAULT_PATTERN = (
    r"(?:.*/)?(?!\d{4}-?\d\d-?\d\d[T ])(?P<student_id>[A-Za-z0-9.@-]+)[_/]"
    r"(?:(?P<timestamp>\d{4}-?\d\d-?\d\d[T ]?\d\d[:-]?\d\d[:-]?\d\d(?:\.\d+)?"
    r"(?:Z|[+-]\d\d:?\d\d)?)[_/])?"
    r"(?P<file_id>week\d+\.ipynb)$")
_TIME = re.compile(r"(\d{4})-?(\d\d)-?(\d\d)[T ]?(\d\d)[:-]?(\d\d)[:-]?(\d\d)(\.\d+)?"
                   r"(Z|[+-]\d\d:?\d\d)?$")


def normal_time(text: str) -> str:
    """A file name's time (``2026-12-01T09-00-00Z``, ``20261201T090000``) as nbgrader
    parses times (``2026-12-01 09:00:00 UTC``); ``text`` itself when it is not one."""
    found = _TIME.match(text.strip())
    if not found:
        return text
    year, month, day, hour, minute, second, fraction, zone = found.groups()
    if zone in (None, "Z"):
        zone = " UTC"
    elif ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"  # +0100 -> +01:00 (attached: nbgrader reads it so)
    return f"{year}-{month}-{day} {hour}:{minute}:{second}{fraction or ''}{zone}"


class LmsCollector(FileNameCollectorPlugin):
    """nbgrader's file-name collector with the course's default pattern (module
    docstring) and file names' times made readable to nbgrader."""

    named_regexp = Unicode(DEFAULT_PATTERN, help="the pattern each submitted file's path "
                           "must match (groups student_id, file_id, optional timestamp)",
                           ).tag(config=True)

    def collect(self, submitted_file: str) -> dict | None:
        info = super().collect(submitted_file)
        if info and info.get("timestamp"):
            info["timestamp"] = normal_time(info["timestamp"])
        elif info:
            info.pop("timestamp", None)
        return info


def stage(week: int, download: Path, repo: Path) -> Path:
    """Put ``download`` (a zip, or a folder of files) alone in ``downloaded/weekN/archive/``
    (replacing an earlier download), where ``zip_collect`` reads it."""
    download = Path(download)
    archive = Path(repo) / "downloaded" / f"week{week}" / "archive"
    if archive.exists():
        shutil.rmtree(archive)
    archive.mkdir(parents=True)
    if download.is_dir():
        shutil.copytree(download, archive / download.name)
    else:
        shutil.copy2(download, archive / download.name)
    return archive


def collect(week: int, download: Path, repo: Path, pattern: str | None = None,
            db_url: str | None = None) -> list[str]:
    """``nbgrader zip_collect weekN`` over ``download`` into ``submitted/`` (each student's
    folder replaced by the download's); the lines to print, each naming its student."""
    from course.grader.autograde import GradingError
    from course.term.coursedir import nbgrader
    from course.term.grades import roster_ids

    download = Path(download)
    if not download.exists():
        raise GradingError(f"{download}: no such file (give the zip your LMS downloaded, "
                           "or a folder of its files)")
    stage(week, download, repo)
    args = ["zip_collect", f"week{week}", "--force",
            "--ZipCollectApp.collector_plugin=course.term.lms.LmsCollector"]
    if pattern:
        args.append(f"--LmsCollector.named_regexp={pattern}")
    done = nbgrader(args, repo, db_url)
    log = (done.stderr + done.stdout).splitlines()
    lines = []
    copied = re.compile(r"Copying to: .*[/\\]submitted[/\\]([^/\\]+)[/\\]"
                        + f"week{week}" + r"[/\\]")
    got = sorted({m.group(1) for line in log if (m := copied.search(line))})
    known = roster_ids(repo, db_url)
    for student in got:
        folder = Path(repo) / "submitted" / student / f"week{week}"
        when = _stamp(folder)
        lines.append(f"{student}: collected into submitted/{student}/week{week}/ "
                     f"({'handed in ' + when if when else 'no submission time'})")
        if not when:
            lines.append(f"{student}: WARNING: the download gives no submission time, so "
                         "nbgrader counts it on time; write the time into "
                         f"submitted/{student}/week{week}/timestamp.txt if it matters")
        if known and student not in known:
            lines.append(f"{student}: WARNING: not on the class list (make roster): check "
                         "the id, or add them to the roster before `make grade`")
    for line in log:
        if "did not match" in line or "Skipped" in line or "Invalid submission" in line:
            lines.append("skipped: " + line.split("]", 1)[-1].strip())
    if not got:
        lines.append(f"nothing collected for week{week} from {download}: no file name "
                     "matched the pattern (PATTERN='...' sets your LMS's)")
    return lines


def _stamp(folder: Path) -> str:
    stamp = folder / "timestamp.txt"
    return stamp.read_text().strip() if stamp.is_file() else ""
