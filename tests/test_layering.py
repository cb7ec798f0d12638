"""The package's floors: every import in ``course/`` points down (or stays in its own subpackage).

Reads every module's source with ``ast`` (imports inside functions included), so a lazy
import cannot hide an upward dependency. ``course.LAYERS`` is the single statement of
the order; the README and the package docstring describe it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import course

PACKAGE = Path(course.__file__).parent
FLOOR = {name: level for level, names in enumerate(course.LAYERS) for name in names}


def _course_imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported subpackage) for every ``course.X`` import in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + ([f"{node.module}.{a.name}" for a in node.names]
                                     if node.module == "course" else [])
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "course" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


def upward_imports(root: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if len(relative.parts) == 1:
            if path.name != "__init__.py":
                problems.append(f"course/{relative}: a module outside every floor")
            continue
        home = relative.parts[0]
        if home not in FLOOR:
            problems.append(f"course/{relative}: subpackage {home!r} is on no floor")
            continue
        for line, target in _course_imports(path):
            if target == home:
                continue
            if target not in FLOOR:
                problems.append(f"course/{relative}:{line} imports course.{target}, on no floor")
            elif FLOOR[target] >= FLOOR[home]:
                problems.append(f"course/{relative}:{line} imports course.{target} "
                                f"(floor {FLOOR[target]}) from floor {FLOOR[home]} ({home})")
    return problems


def test_every_import_points_down():
    assert upward_imports() == []


def test_every_subpackage_is_on_a_floor_and_says_what_it_may_import():
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subpackages == set(FLOOR)
    for name in subpackages:
        doc = (PACKAGE / name / "__init__.py").read_text()
        assert name == "base" or "May import" in doc, (
            f"course/{name}/__init__.py: say what it may import")


@pytest.mark.parametrize(("home", "target"), [("world", "crash"), ("storage", "durable"),
                                              ("classroom", "grading"), ("base", "world")])
def test_an_upward_or_sideways_import_is_caught(tmp_path, home, target):
    fake = tmp_path / "course"
    for name in FLOOR:
        (fake / name).mkdir(parents=True)
        (fake / name / "__init__.py").write_text('"""May import: below."""\n')
    (fake / "__init__.py").write_text("")
    (fake / home / "sneaky.py").write_text(
        f"def later():\n    from course.{target}.anything import thing\n    return thing\n")
    problems = upward_imports(fake)
    assert len(problems) == 1 and f"imports course.{target}" in problems[0], problems


def test_the_layer_table_in_the_docstring_lists_every_floor():
    for name in FLOOR:
        assert f"``course.{name}``" in course.__doc__


# ------------------------------------------------------------ the notebooks' imports
def inner_imports(notebook: Path) -> list[str]:
    """``"<notebook> cell N: <import>"`` for every import from inside a floor
    (``course.X.Y``) in what a learner sees of a source notebook: every code cell, hidden
    tests left out (they are the grader's code, and may reach inside a floor to swap a
    reference for the learner's answer)."""
    import nbformat

    hidden = re.compile(r"### BEGIN HIDDEN TESTS.*?(### END HIDDEN TESTS|\Z)", re.S)
    found = []
    for number, cell in enumerate(nbformat.read(notebook, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(hidden.sub("", cell.source))
        except SyntaxError:  # an IPython magic: no import to check
            continue
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            found += [f"{notebook.name} cell {number}: {name}" for name in names
                      if name.startswith("course.") and name.count(".") > 1]
    return found


def test_notebooks_import_only_the_floors_public_names():
    notebooks = sorted(Path(course.__file__).parent.parent.glob("solutions/week*/week*.ipynb"))
    assert notebooks and [f for nb in notebooks for f in inner_imports(nb)] == []


def test_an_import_from_inside_a_floor_is_caught(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("from course.crash.concurrent import resume_race"),
        nbformat.v4.new_code_cell("import course.cloudwave.nodes as n\nfrom course.crash import x"),
        nbformat.v4.new_code_cell("### BEGIN HIDDEN TESTS\nimport course.durable.recovery as p\n"
                                  "### END HIDDEN TESTS"),
    ])
    nbformat.write(nb, tmp_path / "week9.ipynb")
    assert inner_imports(tmp_path / "week9.ipynb") == [
        "week9.ipynb cell 0: course.crash.concurrent", "week9.ipynb cell 1: course.cloudwave.nodes"]
