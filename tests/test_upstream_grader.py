"""The grader's hooks into nbgrader's internals still fit the nbgrader installed.

Each module of ``course/grader`` that overrides or replaces something nbgrader does not
document says which in its docstring ("Written against: ..."); these tests fail when an
upgrade moves it: the name is gone, its parameters changed, or nbgrader no longer calls
it (so the override would silently do nothing). What each override computes is tested
elsewhere: tests/test_grading_speedups.py (the alembic revision is the program's; the
metadata checks fail where nbgrader's do; generate_assignment gets the course's check),
tests/test_validate.py (the lab's Validate answer), tests/test_grading.py (restore).
"""

from __future__ import annotations

import inspect
import sqlite3
from pathlib import Path

import nbformat


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


# ------------------------------------------------ nbgrader_alembic_heads (module attribute)
def test_a_new_gradebook_asks_nbgraders_module_attribute_for_its_revision(tmp_path,
                                                                          monkeypatch):
    """``nbgrader.api.get_alembic_version`` is looked up by ``Gradebook`` when it creates a
    gradebook (so assigning it takes effect), takes no arguments, and install puts
    ``alembic_head`` there."""
    import nbgrader.api
    from nbgrader.dbutil import ALEMBIC_DIR

    from course.grader import nbgrader_alembic_heads

    assert _parameters(nbgrader.api.get_alembic_version) == []
    assert _parameters(nbgrader_alembic_heads.alembic_head) == []
    assert list((Path(ALEMBIC_DIR) / "versions").glob("*.py"))
    asked = []

    def spy() -> str:
        asked.append(1)
        return nbgrader_alembic_heads.alembic_head()

    monkeypatch.setattr(nbgrader.api, "get_alembic_version", spy)
    with nbgrader.api.Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}"):
        pass
    assert asked == [1]
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        assert db.execute("select version_num from alembic_version").fetchone() == (
            nbgrader_alembic_heads.alembic_head(),)
    nbgrader_alembic_heads.install()  # monkeypatch puts back what was there before
    assert nbgrader.api.get_alembic_version is nbgrader_alembic_heads.alembic_head


# ------------------------------------------------------------------ nbgrader_schema_once
def test_the_schema_check_still_goes_through_super_validate_cell(monkeypatch):
    """nbgrader's v3 validator hands the schema check to ``super().validate_cell(cell)``,
    which lands in the course's ``_CheckedOnce`` (not ``BaseMetadataValidator``), and
    the base class still carries ``schema`` and ``schema_version``."""
    from nbgrader.nbgraderformat.common import BaseMetadataValidator
    from nbgrader.nbgraderformat.v3 import MetadataValidatorV3

    from course.grader import nbgrader_schema_once as once

    for cls in (MetadataValidatorV3, BaseMetadataValidator):
        assert _parameters(cls.validate_cell) == ["self", "cell"]
    assert "validate_cell(cell)" in inspect.getsource(MetadataValidatorV3.validate_cell)
    mro = once.MetadataValidator.__mro__
    assert mro.index(MetadataValidatorV3) < mro.index(once._CheckedOnce) \
        < mro.index(BaseMetadataValidator)
    validator = once.MetadataValidator()
    assert isinstance(validator.schema, dict) and validator.schema_version == 3
    checked = []
    original = once._CheckedOnce.validate_cell
    monkeypatch.setattr(once._CheckedOnce, "validate_cell",
                        lambda self, cell: checked.append(cell) or original(self, cell))
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "t1", "locked": True,
                                 "points": 1, "schema_version": 3, "solution": False}
    validator.validate_nb(nbformat.v4.new_notebook(cells=[cell]))
    assert checked == [cell]


def test_generate_assignment_lists_preprocessor_classes_to_swap():
    """``swap_in`` replaces a class in a converter's ``preprocessors`` list: nbgrader's
    converters still keep one there (the swap itself: tests/test_grading_speedups.py)."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.preprocessors import CheckCellMetadata

    from course.grader import nbgrader_schema_once as once

    assert CheckCellMetadata in GenerateAssignment.class_traits()["preprocessors"].default()
    assert issubclass(once.CheckCellMetadata, CheckCellMetadata)
    assert _parameters(CheckCellMetadata.preprocess) == ["self", "nb", "resources"]


# ------------------------------------------------------------------ nbgrader_failed_cells
def test_validate_still_picks_failed_cells_with_get_failed_cells():
    """``Validator.validate`` calls ``self._get_failed_cells(nb)``; the course's override
    keeps the notebook and nbgrader's own choice of failed cells."""
    from nbgrader.validator import Validator

    from course.grader.nbgrader_failed_cells import FailedCellsKept

    assert _parameters(Validator._get_failed_cells) == ["self", "nb"]
    assert "self._get_failed_cells(nb)" in inspect.getsource(Validator.validate)
    failing = nbformat.v4.new_code_cell("assert False", outputs=[nbformat.v4.new_output(
        "error", ename="AssertionError", evalue="", traceback=[])])
    passing = nbformat.v4.new_code_cell("assert True")
    for cell, grade_id in ((failing, "t1"), (passing, "t2")):
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "locked": True,
                                     "points": 1, "schema_version": 3, "solution": False}
    nb = nbformat.v4.new_notebook(cells=[failing, passing])
    validator = FailedCellsKept()
    assert validator._get_failed_cells(nb) == [failing]
    assert validator.executed == (nb, [failing])


# ------------------------------------------------------------------------------ restore
def test_overwrite_cells_still_reports_each_change_through_report_change():
    """``OverwriteCells.preprocess_cell`` calls ``self.report_change(name, attr, old,
    new)`` (for the checksum among others), and ``preprocess`` sets the ``gradebook``,
    ``notebook_id`` and ``assignment_id`` the course's override reads."""
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import OverwriteCells

    from course.grader.restore import RestoreCells

    assert _parameters(OverwriteCells.report_change) == ["self", "name", "attr", "old", "new"]
    assert _parameters(OverwriteCells.preprocess_cell) == [
        "self", "cell", "resources", "cell_index"]
    calls = inspect.getsource(OverwriteCells.preprocess_cell)
    assert 'self.report_change(grade_id, "checksum"' in calls
    setup = inspect.getsource(OverwriteCells.preprocess)
    for attribute in ("self.gradebook", "self.notebook_id", "self.assignment_id"):
        assert f"{attribute} =" in setup, attribute
    assert _parameters(Gradebook.find_source_cell)[:4] == [
        "self", "name", "notebook", "assignment"]
    assert RestoreCells.report_change is not OverwriteCells.report_change


# ----------------------------------------------------------------------------- validate
def test_the_validate_handler_still_validates_through_validate_notebook():
    """nbgrader's Validate route answers ``post`` with ``self.validate_notebook(path)``,
    which the course's handler overrides, reading ``root_dir`` and ``load_config()``
    (``_load_jupyter_server_extension`` sets ``root_dir`` in the settings as nbgrader's
    own extension does)."""
    from nbgrader.server_extensions.validate_assignment.handlers import (
        ValidateAssignmentHandler,
    )

    from course.grader.validate import CourseValidateHandler

    assert _parameters(ValidateAssignmentHandler.validate_notebook) == ["self", "path"]
    assert "self.validate_notebook(" in inspect.getsource(ValidateAssignmentHandler.post)
    assert _parameters(ValidateAssignmentHandler.load_config) == ["self"]
    assert "settings['root_dir']" in inspect.getsource(ValidateAssignmentHandler)
    theirs = ValidateAssignmentHandler.validate_notebook
    assert CourseValidateHandler.validate_notebook is not theirs
