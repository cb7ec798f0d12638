"""The sandbox room (``course/sandbox``) stays a house one can find one's way in (issue
46): no module over 450 lines, no import circle among its modules (lazy imports
included), no module named after the room itself, and every module on the room's map
(``course/sandbox/__init__.py``). The circle finder is the term room's
(tests/test_term_room.py), which tests it."""

from __future__ import annotations

from pathlib import Path

from test_term_room import LIMIT, circles, room_imports

import course.sandbox

ROOM = Path(course.sandbox.__file__).parent


def test_no_module_of_the_sandbox_is_over_the_limit():
    sizes = {p.name: len(p.read_text().splitlines()) for p in ROOM.glob("*.py")}
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}


def test_the_sandbox_has_no_import_circle():
    graph = room_imports(ROOM)
    assert graph.get("course.sandbox.execute")
    assert circles(graph) == []


def test_every_module_is_named_for_what_it_holds_and_on_the_rooms_map():
    doc = course.sandbox.__doc__ or ""
    modules = {p.stem for p in ROOM.glob("*.py")} - {"__init__"}
    assert "sandbox" not in modules  # course.sandbox.sandbox says nothing
    assert {m for m in modules if f":mod:`course.sandbox.{m}`" not in doc} == set()
