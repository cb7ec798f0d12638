"""The package's shape, as issue 46 left it: rooms a maintainer can find their way in.

- no module of ``course/`` over :data:`MOST_LINES` lines;
- no floor (a folder of ``course/``) over :data:`MOST_SHARE` of the package's lines;
- no import circle between modules, lazy (function-level) imports included;
- each floor's ``__init__.py`` names every module it holds;
- ``docs/contributing.md``'s "Where things live" map names every floor and only floors
  that exist, and every module it names is in the folder it says.

Each rule is checked on the real package and shown to catch a made-up breach.
"""

from __future__ import annotations

import ast
import contextlib
import re
from pathlib import Path

import course

PACKAGE = Path(course.__file__).parent
REPO = PACKAGE.parent
MOST_LINES = 450
MOST_SHARE = 0.15


def lines_of(path: Path) -> int:
    return len(path.read_text().splitlines())


def long_modules(root: Path = PACKAGE) -> list[str]:
    """``"course/x/y.py: N lines"`` for each module over :data:`MOST_LINES`."""
    return [f"course/{p.relative_to(root)}: {lines_of(p)} lines"
            for p in sorted(root.rglob("*.py")) if lines_of(p) > MOST_LINES]


def floor_shares(root: Path = PACKAGE) -> dict[str, float]:
    """Each floor's share of the package's lines (modules at the top count in the total)."""
    total = sum(lines_of(p) for p in root.rglob("*.py"))
    floors = sorted(p.parent for p in root.glob("*/__init__.py"))
    return {f.name: sum(lines_of(p) for p in f.rglob("*.py")) / total for f in floors}


def module_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the ``course`` modules it imports when it runs, anywhere in its source
    (functions and code strings included, ``if TYPE_CHECKING:`` blocks not).
    ``from a.b import c`` points at ``a.b.c`` when that is a module, else at ``a.b``."""
    def name(path: Path) -> str:
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    def walk(tree: ast.AST):
        """Every node but those under ``if TYPE_CHECKING:`` (names for the type checker,
        never imported when the code runs)."""
        todo = [tree]
        while todo:
            node = todo.pop()
            yield node
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                todo.extend(node.orelse)
                continue
            todo.extend(ast.iter_child_nodes(node))

    def nodes(tree: ast.AST):
        """Every node, and the import lines of code a module runs from a string
        (``python -c`` workers)."""
        for node in walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for line in node.value.splitlines():
                    if line.strip().startswith(("from course.", "import course.")):
                        with contextlib.suppress(SyntaxError):
                            yield from ast.walk(ast.parse(line.strip()))
            yield node

    modules = {name(p): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for node in nodes(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                           else node.module for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    graph[module].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or round a loop
    (Tarjan's strongly connected components, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def unnamed_modules(root: Path = PACKAGE) -> list[str]:
    """Modules their floor's docstring does not name (``course.f.m``, ````m```` or
    ``m.py``)."""
    problems = []
    for init in sorted(root.glob("*/__init__.py")):
        floor = init.parent.name
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        for path in sorted(init.parent.glob("*.py")):
            module = path.stem
            if module in ("__init__", "__main__"):
                continue
            if not any(f in doc for f in (f"course.{floor}.{module}", f"``{module}``",
                                          f"{module}.py", f"~course.{floor}.{module}")):
                problems.append(f"course/{floor}/__init__.py does not name {module}")
    return problems


def map_problems(doc: str, root: Path = PACKAGE) -> list[str]:
    """What the "Where things live" section of ``doc`` gets wrong about ``root``."""
    section = re.search(r"^## Where things live\n(.*?)(?=^## |\Z)", doc, re.S | re.M)
    if not section:
        return ["no '## Where things live' section"]
    text = section.group(1)
    named = set(re.findall(r"`course/(\w+)/`", text))
    floors = {p.parent.name for p in root.glob("*/__init__.py")}
    problems = [f"course/{f}/ is not on the map" for f in sorted(floors - named)]
    problems += [f"the map names course/{f}/, which does not exist" for f in sorted(named - floors)]
    for row in re.findall(r"^\|\s*`course/(\w+)/`\s*\|(.*)$", text, re.M):
        folder, rest = row
        for module in re.findall(r"`(\w+)\.py`", rest):
            if not (root / folder / f"{module}.py").exists():
                problems.append(f"the map puts {module}.py in course/{folder}/, which lacks it")
    return problems


# --------------------------------------------------------------------- the package
def test_no_module_is_over_the_limit():
    assert long_modules() == []


def test_no_floor_holds_more_than_its_share():
    assert {f: round(s, 3) for f, s in floor_shares().items() if s > MOST_SHARE} == {}


def test_no_modules_import_each_other():
    assert circles(module_graph()) == []


def test_each_floor_names_its_modules():
    assert unnamed_modules() == []


def test_the_map_matches_the_folders():
    assert map_problems((REPO / "docs" / "contributing.md").read_text()) == []


# ------------------------------------------------------------- each rule can fail
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "course"
    for relative, source in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(source)
    return root


def test_a_long_module_and_a_fat_floor_are_caught(tmp_path):
    root = _package(tmp_path, {"__init__.py": "", "a/__init__.py": "",
                               "a/big.py": "x = 1\n" * (MOST_LINES + 1),
                               "b/__init__.py": "", "b/small.py": "y = 1\n"})
    assert long_modules(root) == [f"course/a/big.py: {MOST_LINES + 1} lines"]
    shares = floor_shares(root)
    assert shares["a"] > MOST_SHARE and shares["b"] < 0.01


def test_a_lazy_circle_is_caught(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "", "t/__init__.py": "",
        "t/steps.py": "def main():\n    from course.t.grade import grade_class\n",
        "t/grade.py": "from course.t import steps\n",
        "t/table.py": "from course.t.steps import main\n",
        "t/pool.py": 'WORKER = """\nfrom course.t.run import go\n"""\n',
        "t/run.py": "from course.t.pool import WORKER\n",
        "t/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from course.t.hints import Hint\n",
        "t/hints.py": "from course.t.typed import x\n",
    })
    assert circles(module_graph(root)) == [["course.t.grade", "course.t.steps"],
                                           ["course.t.pool", "course.t.run"]]


def test_an_unnamed_module_is_caught(tmp_path):
    root = _package(tmp_path, {"__init__.py": "",
                               "s/__init__.py": '"""- :mod:`course.s.jail`: walls."""\n',
                               "s/jail.py": "", "s/s.py": "", "s/guard.py": ""})
    assert unnamed_modules(root) == ["course/s/__init__.py does not name guard",
                                     "course/s/__init__.py does not name s"]


def test_a_wrong_map_is_caught(tmp_path):
    root = _package(tmp_path, {"__init__.py": "", "a/__init__.py": "", "a/x.py": "",
                               "b/__init__.py": ""})
    doc = ("## Where things live\n\n| folder | what |\n|---|---|\n"
           "| `course/a/` | `x.py`, `y.py` |\n| `course/c/` | gone |\n\n## Next\n`course/b/`\n")
    assert map_problems(doc, root) == [
        "course/b/ is not on the map", "the map names course/c/, which does not exist",
        "the map puts y.py in course/a/, which lacks it"]
