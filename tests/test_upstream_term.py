"""The term's overrides of libraries' private hooks still meet the libraries they patch.

Each test fails when the library changes underneath an override (rooms of issue 46):

- :mod:`course.term.nbgrader_gradebook_commits`: nbgrader's Gradebook commits through
  ``self.db.commit()`` of a SQLAlchemy ``scoped_session``, which the course turns into
  ``flush`` for one transaction per student;
- :mod:`course.term.nbconvert_soup_pass`: ``FeedbackExporter`` repeats what
  ``HTMLExporter.from_notebook_node`` does before its BeautifulSoup pass, with its
  private ``_init_resources`` and ``_nb_metadata``.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re

import nbformat
import pytest

# -------------------------------------------------- nbgrader's commits made flushes


@pytest.fixture
def gradebook(tmp_path, monkeypatch):
    """An nbgrader gradebook holding one assignment (one notebook, one graded cell) and
    one student, committed."""
    from nbgrader.api import Gradebook

    from course.term.coursedir import tools_on_path

    monkeypatch.setenv("PATH", tools_on_path(dict(os.environ))["PATH"])  # alembic
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        gb.add_assignment("week1")
        gb.add_notebook("week1", "week1")
        gb.add_grade_cell("ex1", "week1", "week1", max_score=1, cell_type="code")
        gb.add_student("ada")
        yield gb


def test_the_gradebook_commits_through_its_sqlalchemy_session():
    from nbgrader.api import Gradebook
    from sqlalchemy.orm import scoped_session

    for name in ("commit", "flush", "rollback"):
        assert callable(getattr(scoped_session, name, None)), f"scoped_session.{name} is gone"
    # the override calls commit() and flush() without arguments
    assert list(inspect.signature(scoped_session.commit).parameters) == ["self"]
    assert all(p.default is not p.empty for n, p in
               inspect.signature(scoped_session.flush).parameters.items() if n != "self")
    for method in (Gradebook.add_submission, Gradebook.update_or_create_student):
        assert "self.db.commit()" in inspect.getsource(method), (
            f"nbgrader's {method.__name__} no longer commits through self.db.commit(): "
            "re-read course/term/nbgrader_gradebook_commits.py")
    assert {"assignment", "student"} <= set(inspect.signature(Gradebook.add_submission)
                                            .parameters)


def test_a_block_that_fails_leaves_nothing_of_nbgraders_commits(gradebook):
    from nbgrader.api import MissingEntry
    from sqlalchemy.orm import scoped_session

    from course.term.nbgrader_gradebook_commits import one_transaction

    assert isinstance(gradebook.db, scoped_session)  # what the override assigns on
    with pytest.raises(RuntimeError), one_transaction(gradebook):
        gradebook.add_submission("week1", "ada")  # commits, were it not a flush
        gradebook.update_or_create_student("bo")
        raise RuntimeError("killed mid-merge")
    assert "commit" not in vars(gradebook.db)  # the class's own commit again
    with pytest.raises(MissingEntry):
        gradebook.find_submission("week1", "ada")
    with pytest.raises(MissingEntry):
        gradebook.find_student("bo")


def test_a_block_that_ends_is_committed_once(gradebook, monkeypatch):
    from course.term.nbgrader_gradebook_commits import one_transaction

    commits = []
    real = type(gradebook.db).commit
    monkeypatch.setattr(type(gradebook.db), "commit",
                        lambda self: commits.append(1) or real(self))
    with one_transaction(gradebook):
        gradebook.add_submission("week1", "ada")
        gradebook.update_or_create_student("bo", first_name="Bo")
        assert commits == []  # nbgrader's commits were flushes
    assert commits == [1]
    gradebook.db.rollback()  # nothing pending: what was committed stays
    assert gradebook.find_submission("week1", "ada").student_id == "ada"
    assert gradebook.find_student("bo").first_name == "Bo"


# ------------------------------------------------- nbconvert's HTML exporter, copied

# sha256 of HTMLExporter.from_notebook_node's source up to its BeautifulSoup pass, as
# nbconvert 7.17.2 has it: the part FeedbackExporter repeats.
COPIED = "1cde5f1abe5892d9f68c48953fc8ce43f058f4a963a65df1756c5ecf90740759"


def _before_the_soup() -> str:
    from nbconvert.exporters import HTMLExporter

    source = inspect.getsource(HTMLExporter.from_notebook_node)
    body = source[:source.index("soup = BeautifulSoup")].split('"""', 2)[-1]
    return re.sub(r"\s+", " ", body).strip()


def test_the_html_exporter_still_does_what_feedback_exporter_repeats():
    from nbconvert.exporters import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter

    from course.term.nbconvert_soup_pass import FeedbackExporter

    assert issubclass(FeedbackExporter, HTMLExporter)
    assert HTMLExporter.__mro__[1] is TemplateExporter  # the super() it calls past HTML's
    assert list(inspect.signature(HTMLExporter._init_resources).parameters) == [
        "self", "resources"]
    assert isinstance(HTMLExporter()._nb_metadata, dict)
    assert {"nb", "resources"} <= set(
        inspect.signature(TemplateExporter.from_notebook_node).parameters)
    digest = hashlib.sha256(_before_the_soup().encode()).hexdigest()
    assert digest == COPIED, (
        "HTMLExporter.from_notebook_node changed before its BeautifulSoup pass: compare it "
        "with FeedbackExporter.from_notebook_node (course/term/nbconvert_soup_pass.py), "
        f"then set COPIED to {digest}")


def test_feedback_pages_are_rendered_without_beautifulsoup(monkeypatch):
    import bs4
    import nbconvert.exporters.html

    from course.term.nbconvert_soup_pass import NO_ALT, FeedbackExporter

    def refuse(*args, **kwargs):
        raise AssertionError("BeautifulSoup ran")

    monkeypatch.setattr(nbconvert.exporters.html, "BeautifulSoup", refuse)
    monkeypatch.setattr(bs4, "BeautifulSoup", refuse)
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell('<img src="a.png">'),
        nbformat.v4.new_code_cell("1 + 1")])
    html, _ = FeedbackExporter(template_name="classic").from_notebook_node(nb)
    assert f'<img alt="{NO_ALT}" src="a.png">' in html
