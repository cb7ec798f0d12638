"""What the grading shortcuts promise: the same result, less waiting.

- :class:`course.term.nbconvert_soup_pass.FeedbackExporter` renders the same document as
  nbconvert's HTMLExporter (compared after both go through BeautifulSoup, which is what
  HTMLExporter itself ends with), and adds the same alt text to the same images;
- :func:`course.grader.speedups.alembic_head` is what the ``alembic heads`` program says;
- :func:`course.grader.speedups.throwaway_gradebook` changes SQLite's journal only for
  databases inside its folder.
"""

from __future__ import annotations

import base64
import copy
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from traitlets.config.loader import PyFileConfigLoader

from course.grader import speedups
from course.term.nbconvert_soup_pass import NO_ALT, FeedbackExporter, with_alt_text

REPO = Path(__file__).resolve().parent.parent
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode()


def _reference(html: str) -> str:
    """What nbconvert's HTMLExporter does to its template's output."""
    soup = BeautifulSoup(html, features="html.parser")
    for element in soup.select("img:not([alt])"):
        element.attrs["alt"] = NO_ALT
    for selector in (".jp-Notebook div.jp-Cell-inputWrapper",
                     ".jp-Notebook div.jp-OutputArea-output"):
        for element in soup.select(selector):
            element.attrs["tabindex"] = "0"
    return str(soup)


@pytest.mark.parametrize("html", [
    "<p>no image</p>", '<IMG src="a">', '<img src=a alt="">', "<img/src=x><p>ok</p>",
    '<script>var s = "<img src=x>";</script><img src="y"/>',
    '<!-- <img src=c> --><div>\r\n<img\nsrc="d"\n>\u2028<img src=e></div>',
    'a < b <img src="f" title="1>0">', "<style>img{}</style><textarea><img src=g></textarea>",
    '&amp;<img src="h&amp;i"><img alt="kept" src=j>'])
def test_alt_text_goes_where_beautifulsoup_puts_it(html):
    mine, added = with_alt_text(html)
    assert str(BeautifulSoup(mine, features="html.parser")) == _reference(html)
    assert added == _reference(html).count(NO_ALT) - html.count(NO_ALT)


def _notebook() -> nbformat.NotebookNode:
    code = nbformat.v4.new_code_cell("plot()  # <img src=in-code>")
    code.outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "fig"}),
        nbformat.v4.new_output("display_data", data={
            "text/html": '<b>raw</b><img src="x.png"><script>"<img src=q>"</script>'}),
        nbformat.v4.new_output("stream", name="stdout", text="a < b & 'c' \"d\"\n"),
        nbformat.v4.new_output("error", ename="AssertionError", evalue="it's <wrong>",
                               traceback=["AssertionError: it's <wrong>"])]
    text = nbformat.v4.new_markdown_cell("# Week\n\n![a picture](data:image/png;base64,"
                                         f"{PNG})\n\nIt's *fine* & <i>ok</i>.")
    return nbformat.v4.new_notebook(cells=[text, code], metadata={
        "language_info": {"name": "python", "pygments_lexer": "ipython3"}})


@pytest.mark.parametrize("template", ["classic", "lab"])
def test_the_feedback_exporter_renders_the_same_document(template):
    nb = _notebook()
    theirs, _ = HTMLExporter(template_name=template).from_notebook_node(nb)
    mine, _ = FeedbackExporter(template_name=template).from_notebook_node(nb)
    assert str(BeautifulSoup(mine, features="html.parser")) == theirs
    assert theirs.count(NO_ALT) >= 2


def test_nbgrader_feedback_uses_the_feedback_exporter():
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    assert config.GenerateFeedback.exporter_class == \
        f"{FeedbackExporter.__module__}.{FeedbackExporter.__name__}"


def test_the_alembic_revision_is_what_the_alembic_program_says():
    from nbgrader.dbutil import _temp_alembic_ini

    # the program nbgrader would start: the one on PATH (a student's shim), else the venv's
    alembic = shutil.which("alembic") or Path(sys.executable).parent / "alembic"
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        said = subprocess.run([str(alembic), "-c", ini, "heads"], capture_output=True,
                              text=True, check=True).stdout
    assert speedups.alembic_head() == said.split("\n")[0].split(" ")[0]
    speedups.install()
    import nbgrader.api

    assert nbgrader.api.get_alembic_version() == speedups.alembic_head()


ADD_A_STUDENT = """
import os, sys
from nbgrader.apps.dbapp import DbStudentAddApp
for folder in sys.argv[1:]:  # stock nbgrader first: the course's configuration patches it
    os.chdir(folder)
    app = DbStudentAddApp()
    app.initialize(["ada"])  # reads ./nbgrader_config.py, as every nbgrader command does
    try:
        app.start()
    except OSError as error:
        print(f"failed: {error}")
    else:
        print("added")
"""


def test_nbgrader_apps_in_the_course_create_a_gradebook_without_the_alembic_program(tmp_path):
    """``nbgrader_config.py`` installs :func:`speedups.install` for every nbgrader app that
    reads it (the formgrader, ``nbgrader db``...): with no ``alembic`` program to find, a
    new gradebook is still made, with the revision the program would have said; in a
    folder without the course's configuration, stock nbgrader cannot make one there."""
    stock, course = tmp_path / "stock", tmp_path / "course"
    stock.mkdir(), course.mkdir(), (tmp_path / "bin").mkdir()
    shutil.copy2(REPO / "nbgrader_config.py", course / "nbgrader_config.py")
    env = {**os.environ, "PATH": str(tmp_path / "bin"), "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", ADD_A_STUDENT, str(stock), str(course)],
                          env=env, capture_output=True, text=True)
    said = [line for line in done.stdout.splitlines() if line.startswith(("failed", "added"))]
    assert len(said) == 2, done.stdout + done.stderr[-2000:]
    assert said[0].startswith("failed: ") and "alembic" in said[0], said
    assert said[1] == "added", said
    with sqlite3.connect(course / "gradebook.db") as db:
        assert db.execute("select version_num from alembic_version").fetchone() == (
            speedups.alembic_head(),)


def test_only_a_throwaway_gradebook_skips_the_disk(tmp_path):
    from sqlalchemy import create_engine, text

    inside, outside = tmp_path / "course", tmp_path / "repo"
    inside.mkdir()
    outside.mkdir()
    modes = {}
    with speedups.throwaway_gradebook(inside):
        for name, folder in (("inside", inside), ("outside", outside)):
            engine = create_engine(f"sqlite:///{folder / 'gradebook.db'}")
            with engine.connect() as connection:
                modes[name] = (connection.execute(text("PRAGMA journal_mode")).scalar(),
                               connection.execute(text("PRAGMA synchronous")).scalar())
            engine.dispose()
    assert modes == {"inside": ("memory", 0), "outside": ("delete", 2)}
    engine = create_engine(f"sqlite:///{inside / 'gradebook.db'}")  # after the block: defaults
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA synchronous")).scalar() == 2
    engine.dispose()
    assert sqlite3.connect(os.fspath(inside / "gradebook.db")).execute(
        "PRAGMA integrity_check").fetchone() == ("ok",)


def _nbgrader_cell(**meta) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "t1", "locked": True,
                                 "points": 1, "schema_version": 3, "solution": False, **meta}
    return cell


@pytest.mark.parametrize("meta", [
    {}, {"points": "one"}, {"grade_id": 7}, {"schema_version": 2}, {"schema_version": 9},
    {"solution": True, "grade": False, "locked": False}, {"task": True, "grade": False},
    {"grade": "yes"}, {"cell_type": "markdown"}])
def test_cell_metadata_checks_as_nbgrader_does(meta):
    """The course's CheckCellMetadata fails (and passes) exactly where nbgrader's does."""
    from nbgrader.preprocessors import CheckCellMetadata as Theirs

    from course.grader.metadata import CheckCellMetadata as Ours

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("hi"),
                                               _nbgrader_cell(**meta)])

    def outcome(check):
        try:
            done, _ = check().preprocess(copy.deepcopy(notebook), {})
        except Exception as error:  # the same type and message, whatever it is
            return type(error).__name__, str(error)
        return "ok", json_of(done)

    assert outcome(Ours) == outcome(Theirs)

    from nbgrader.nbgraderformat import MetadataValidator as TheirValidator

    from course.grader.metadata import MetadataValidator as OurValidator

    def detail(validator):  # what the check logs: the validator's own error
        try:
            validator().validate_nb(copy.deepcopy(notebook))
        except Exception as error:
            return type(error).__name__, str(error)
        return "ok"

    assert detail(OurValidator) == detail(TheirValidator)


def json_of(nb) -> str:
    return nbformat.writes(nb)


def test_generate_assignment_gets_the_course_check():
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import CheckCellMetadata as Theirs

    from course.grader.metadata import CheckCellMetadata as Ours

    app = GenerateAssignment(coursedir=CourseDirectory())
    before = list(app.preprocessors)
    speedups.lighten(app)
    assert app.preprocessors == [Ours if p is Theirs else p for p in before]
    assert before.count(Theirs) == 2 and Theirs not in app.preprocessors


def test_remembered_highlight_is_the_highlighter():
    from nbconvert.filters.highlight import Highlight2HTML

    from course.term.nbconvert_soup_pass import RememberedHighlight

    sources = ["x = 1  # <b>", "%%bash\necho hi", "", "def f():\n    return 'a'"]
    for lexer in ("ipython3", "python"):
        for source in sources:
            for metadata in (None, {"magics_language": "bash"}, {"tags": ["x"]}):
                expected = Highlight2HTML(pygments_lexer=lexer)(source, metadata=metadata)
                for _ in range(2):  # computed, then remembered
                    assert RememberedHighlight(pygments_lexer=lexer)(
                        source, metadata=metadata) == expected


def _sleeper(seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


def test_each_group_is_merged_once_as_soon_as_it_is_done(tmp_path):
    from course.term.classgrade import _wait

    jobs = [(tmp_path, [], None, _sleeper(s)) for s in (0.1, 2.0)]
    merged = []

    def finished(i):
        merged.append((i, [job.poll() is None for *_, job in jobs]))

    _wait(jobs, 5, None, finished)
    assert [i for i, _ in merged] == [0, 1]
    assert merged[0][1] == [False, True]  # group 0 merged while group 1 still ran


def test_a_failed_merge_stops_the_other_workers(tmp_path):
    from course.term.classgrade import _wait

    jobs = [(tmp_path, [], None, _sleeper(s)) for s in (0.1, 60)]

    def finished(i):
        raise RuntimeError("gradebook unreachable")

    with pytest.raises(RuntimeError, match="unreachable"):
        _wait(jobs, 5, None, finished)
    assert jobs[1][3].poll() is not None


@pytest.mark.parametrize(("text", "expected"), [
    ("revision = 'b2'\ndown_revision = 'a1'\nbranch_labels = None\ndepends_on = None\n",
     ("b2", "a1")),
    ("revision = 'a1'\ndown_revision = None\n", ("a1", None)),
    ("revision = 'm3'\ndown_revision = ('b2', 'c2')\n", None),  # a merge: alembic decides
    ("revision = 'b2'\ndown_revision = 'a1'\ndepends_on = 'x9'\n", None),
    ("down_revision = 'a1'\n", None)])
def test_only_plain_migration_scripts_are_read_as_text(tmp_path, text, expected):
    script = tmp_path / "script.py"
    script.write_text('"""a migration"""\nfrom alembic import op\n' + text)
    assert speedups._revision_of(script) == expected
