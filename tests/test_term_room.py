"""The term room (``course/term``) stays a house one can find one's way in (issue 46):
no module over 450 lines, and no import circle among its modules, lazy imports and the
code its workers run from a string included."""

from __future__ import annotations

import ast
from pathlib import Path

import course.term

ROOM = Path(course.term.__file__).parent
LIMIT = 450


def room_imports(room: Path = ROOM) -> dict[str, set[str]]:
    """``{module: the room's modules it imports}``, from the source (``ast``)."""
    package = f"course.{room.name}"
    graph: dict[str, set[str]] = {}
    for path in sorted(room.glob("*.py")):
        name = package if path.stem == "__init__" else f"{package}.{path.stem}"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == package:
                    found |= {f"{package}.{alias.name}" for alias in node.names}
                elif node.module.startswith(package + "."):
                    found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith(package + ".")}
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found |= {line.split()[1] for line in node.value.splitlines()
                          if line.startswith(f"from {package}.")}  # python -c code
        graph[name] = found - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, each once (starting at its smallest module)."""
    found = []

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                found.append([*path, start])
            elif nxt > start and nxt not in path:
                walk(start, nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return found


def test_no_module_of_the_room_is_over_the_limit():
    sizes = {p.name: len(p.read_text().splitlines()) for p in ROOM.glob("*.py")}
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}


def test_the_room_has_no_import_circle():
    assert circles(room_imports()) == []


def test_a_circle_is_found_lazy_or_not(tmp_path):
    room = tmp_path / "term"
    room.mkdir()
    (room / "__init__.py").write_text("")
    (room / "a.py").write_text("from course.term.b import x\n")
    (room / "b.py").write_text("def f():\n    from course.term import a\n")
    (room / "c.py").write_text('W = """\nfrom course.term.c import g\n"""\n')
    graph = room_imports(room)
    assert graph["course.term.c"] == set()  # itself is no circle
    assert circles(graph) == [["course.term.a", "course.term.b", "course.term.a"]]
