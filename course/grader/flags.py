"""A static flagger: answers that reach into the grading machinery, held for a person.

The test guard (:mod:`course.sandbox.intact`) lives in the student's own kernel, so code
written against it can defeat it (issue 43: the guard's secret read from its closure,
the kernel's ``do_execute`` or ``session.send`` wrapped, event callbacks with a forged
``__module__``, a course simulator's method replaced, ``PYTHONPATH`` pointed at a
``sitecustomize.py``). No exercise of the course needs any of that. So before anything
runs, the grader reads every code cell the student wrote (every cell but the locked ones
nbgrader puts back) with Python's :mod:`ast`, outside the sandbox, and names each
construct of these kinds:

- the kernel or IPython: ``get_ipython``, imports of ``IPython``, ``ipykernel``,
  ``jupyter_client``, ``zmq``, ``comm``;
- the grader or its test guard: ``course.grader``, ``course.sandbox``, ``course.term``,
  ``course.host``, ``course.grading`` beyond its public helpers, names such as ``_grading_check``;
- introspection: frames, closures and code objects (``__code__``, ``__globals__``,
  ``__closure__``, ``f_back``...), ``gc``, ``inspect``, ``ctypes``, ``sys._getframe``,
  ``sys.settrace`` and the other ``sys`` hooks, ``sys.meta_path``, assignments to ``sys``'s
  attributes or to ``sys.modules``, a dunder attribute set (``f.__module__ = ...``);
- the environment of child processes: ``os.environ`` changed, ``os.putenv``, a file named
  ``sitecustomize``/``usercustomize``/``*.pth``;
- ``exec``, ``eval``, ``compile``, ``__import__``, ``importlib.import_module`` on
  anything but a literal;
- an assignment to an attribute of the course package or of any imported module or name
  (``nodes.charge_keyed = ...``, ``setattr(BillingSimulator, ...)``, ``type(x).m = ...``).

Each finding is said in the grader's words (a fixed phrase and the Python names
involved). A flagged submission is graded as usual and held for a person: the row's note
names what it did. ``make check`` prints the same flags, so an honest learner sees them
before submitting. The rules fire on no solution and no known answer of the course
(``tests/test_grading_flags.py`` reads every one).

What it cannot see: code that reaches these things without naming them (a name built
from strings and fetched with ``getattr``, an object reached through a library that
exposes it). It is a tripwire for a person, not a wall.
"""

from __future__ import annotations

import ast

KERNEL_MODULES = ("IPython", "ipykernel", "jupyter_client", "zmq", "comm", "traitlets",
                  "nbclient", "nbgrader")
INTROSPECTION_MODULES = ("gc", "inspect", "ctypes", "_ctypes", "cffi", "dis")
GRADER_NAMES = ("_grading_check", "_grading_ran", "_grading_")
FRAME_ATTRS = frozenset({"__code__", "__globals__", "__closure__", "__builtins__",
                         "__subclasses__", "__func__", "__self__", "cell_contents",
                         "f_back", "f_globals", "f_locals", "f_code", "f_builtins",
                         "tb_frame", "gi_frame", "cr_frame", "ag_frame", "co_consts"})
SYS_HOOKS = frozenset({"_getframe", "settrace", "setprofile", "addaudithook", "meta_path",
                       "path_hooks", "path_importer_cache", "modules", "_current_frames",
                       "setrecursionlimit", "excepthook", "displayhook", "breakpointhook",
                       "stdout", "stderr", "stdin", "__stdout__", "__stderr__",
                       "monitoring", "set_asyncgen_hooks", "setswitchinterval"})
SYS_READS_OK = frozenset({"stdout", "stderr", "stdin", "modules", "setrecursionlimit"})
DYNAMIC = frozenset({"exec", "eval", "compile", "__import__", "importlib.import_module",
                     "import_module", "importlib.__import__", "builtins.exec",
                     "builtins.eval"})
ENV_CHANGES = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__",
                         "__delitem__"})
# Variables that change how a child interpreter, loader or shell starts, or what the grader
# reads: a change to one of these (or to a name the cell computes) is flagged; an
# exercise's own setting (the Claude SDK's CLAUDE_CONFIG_DIR in week 7) is not.
SENSITIVE_ENV = ("PYTHON", "LD_", "DYLD_", "COURSE_", "JUPYTER", "IPYTHON", "VIRTUAL_ENV",
                 "BASH_ENV", "NODE_OPTIONS", "PERL5", "RUBYOPT")
SENSITIVE_EXACT = frozenset({"PATH", "ENV", "HOME", "TMPDIR"})
# The grading machinery's floors (course.grading itself offers its public helpers).
GRADER_PACKAGES = [["course", "grader"], ["course", "sandbox"], ["course", "term"],
                   ["course", "host"]]
STARTUP_FILES = ("sitecustomize", "usercustomize", ".pth")
SAFE_MAGICS = frozenset({"matplotlib", "time", "timeit", "capture", "prun", "who", "whos",
                         "pwd", "ls", "pip", "html", "markdown", "writefile"})


def _public_helpers() -> frozenset[str]:
    """What ``course.grading`` offers notebooks (its ``__all__``: ``kill_self``,
    ``run_forked``, ``count_runs``...), read without importing it."""
    from pathlib import Path

    tree = ast.parse((Path(__file__).parents[1] / "grading" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


PUBLIC = _public_helpers()


def sensitive(key: ast.AST | None) -> bool:
    """Whether changing environment variable ``key`` (a node of the cell) is flagged."""
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return True
    return key.value.startswith(SENSITIVE_ENV) or key.value in SENSITIVE_EXACT


def flags(source: str) -> list[str]:
    """What in ``source`` (one code cell) reaches into the grading machinery (module
    docstring), one phrase each, in order; empty when nothing does or when it does not
    parse (a syntax error fails its own tests)."""
    tree, magics = _parse(source)
    if tree is None:
        return []
    return list(dict.fromkeys(_Finder(tree, magics).found))


def _parse(source: str) -> tuple[ast.Module | None, bool]:
    """The cell's syntax tree, and whether its ``get_ipython()`` calls are IPython's own
    rewriting of ``%magic`` and ``!shell`` lines (none written by the student)."""
    try:
        return ast.parse(source), False
    except SyntaxError:
        pass
    try:  # IPython syntax (%magic, !shell): what IPython would run
        from IPython.core.inputtransformer2 import TransformerManager

        tree = ast.parse(TransformerManager().transform_cell(source))
    except Exception:  # not Python, not IPython: nothing of it runs
        return None, False
    return tree, "get_ipython" not in source


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names and attributes; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


class _Finder(ast.NodeVisitor):
    def __init__(self, tree: ast.Module, magics: bool = False) -> None:
        self.found: list[str] = []
        self.magics = magics
        self.imported: dict[str, str] = {}  # local name → what it was imported as
        for node in ast.walk(tree):  # imports anywhere in the cell, first
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.imported[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = \
                        f"{node.module or ''}.{alias.name}".lstrip(".")
        self.environ = {n for n, full in self.imported.items() if full == "os.environ"}
        self.visit(tree)

    def say(self, what: str) -> None:
        self.found.append(what)

    # ------------------------------------------------------------------ imports
    def _module(self, name: str) -> None:
        top = name.split(".")[0]
        if top in KERNEL_MODULES:
            self.say(f"reaches into the kernel or IPython (imports {name})")
        elif top in INTROSPECTION_MODULES:
            self.say(f"introspection (imports {name})")
        elif name.startswith("course.grading.") or name.split(".")[:2] in GRADER_PACKAGES:
            self.say(f"reaches into the grader (imports {name})")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._module(module)
        for alias in node.names:
            if module == "course.grading" and alias.name not in PUBLIC:
                self.say(f"reaches into the grader (imports course.grading.{alias.name})")
            elif module == "course" and ["course", alias.name] in GRADER_PACKAGES:
                self.say(f"reaches into the grader (imports course.{alias.name})")
            elif module == "sys" and alias.name in SYS_HOOKS - SYS_READS_OK:
                self.say(f"introspection (sys.{alias.name})")
            elif module == "os" and alias.name in ("putenv", "unsetenv"):
                self.imported[alias.asname or alias.name] = f"os.{alias.name}"

    # -------------------------------------------------------------- names, reads
    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "get_ipython":
            self.say("reaches into the kernel or IPython (get_ipython)")
        elif node.id.startswith(GRADER_NAMES):
            self.say(f"reaches into the grader ({node.id})")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = _dotted(node) or ""
        if node.attr in FRAME_ATTRS:
            self.say(f"introspection (.{node.attr})")
        elif node.attr.startswith(GRADER_NAMES):
            self.say(f"reaches into the grader (.{node.attr})")
        elif dotted.startswith("sys.") and dotted.split(".")[1] in SYS_HOOKS - SYS_READS_OK:
            self.say(f"introspection ({'.'.join(dotted.split('.')[:2])})")
        elif dotted in ("threading.settrace", "threading.setprofile",
                        "threading.settrace_all_threads", "threading.setprofile_all_threads"):
            self.say(f"introspection ({dotted})")
        elif (dotted.startswith("course.grading.") \
                and dotted.split(".")[2] not in PUBLIC) or dotted.split(".")[:2] in GRADER_PACKAGES:
            self.say(f"reaches into the grader ({'.'.join(dotted.split('.')[:3])})")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value.startswith(GRADER_NAMES):
            self.say(f"reaches into the grader ({node.value[:40]!r})")
        if isinstance(node.value, str) and any(s in node.value for s in STARTUP_FILES) \
                and not node.value.strip().startswith(("#", "%")):
            what = next(s for s in STARTUP_FILES if s in node.value)
            if what != ".pth" or node.value.rstrip().endswith(".pth"):
                self.say(f"changes the environment of child processes (a {what} file)")

    # ------------------------------------------------------------------- calls
    def visit_Call(self, node: ast.Call) -> None:
        func = _dotted(node.func) or ""
        literal = bool(node.args) and isinstance(node.args[0], ast.Constant)
        if func in DYNAMIC and not literal:
            self.say(f"runs code it builds ({func} on a non-literal)")
        elif func in ("setattr", "delattr") and node.args:
            self._assigned(node.args[0], func)
        elif self.magics and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Call) \
                and _dotted(node.func.value.func) == "get_ipython":
            self._magic(node)
            return
        elif (func in ("os.putenv", "os.unsetenv") or self.imported.get(func) in (
                "os.putenv", "os.unsetenv")) and sensitive(node.args[0] if node.args else None):
            self.say(f"changes the environment of child processes ({func})")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ENV_CHANGES \
                and self._is_environ(node.func.value) and self._env_call_sensitive(node):
            self.say(f"changes the environment of child processes (os.environ."
                     f"{node.func.attr})")
        self.generic_visit(node)

    def _magic(self, node: ast.Call) -> None:
        """``%name`` or ``!cmd`` as IPython rewrites them (``get_ipython().run_line_magic(
        'name', ...)``): only some magics are worth a person's look."""
        method = node.func.attr  # type: ignore[attr-defined]
        if method in ("run_line_magic", "run_cell_magic") and node.args \
                and isinstance(node.args[0], ast.Constant):
            name = str(node.args[0].value)
            if name not in SAFE_MAGICS:
                self.say(f"reaches into the kernel or IPython (%{name})")
        elif method not in ("system", "getoutput"):
            self.say(f"reaches into the kernel or IPython (get_ipython().{method})")
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            self.visit(arg)

    @staticmethod
    def _env_call_sensitive(node: ast.Call) -> bool:
        """``os.environ.<method>(...)``: a change to a sensitive or computed variable?"""
        method = node.func.attr  # type: ignore[attr-defined]
        if method in ("clear", "popitem"):
            return True
        if method == "update":
            if node.keywords or len(node.args) != 1 or not isinstance(node.args[0], ast.Dict):
                return any(sensitive(ast.Constant(k.arg)) for k in node.keywords) \
                    if node.keywords and not node.args else True
            return any(sensitive(k) for k in node.args[0].keys)
        return sensitive(node.args[0] if node.args else None)

    def _is_environ(self, node: ast.AST) -> bool:
        dotted = _dotted(node)
        return dotted == "os.environ" or (dotted in self.environ)

    # ------------------------------------------------------------- assignments
    def _assigned(self, target: ast.AST, how: str = "") -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for item in target.elts:
                self._assigned(item, how)
            return
        if isinstance(target, ast.Subscript):
            if self._is_environ(target.value) and sensitive(target.slice):
                self.say("changes the environment of child processes (os.environ[...])")
            elif _dotted(target.value) == "sys.modules":
                self.say("introspection (sys.modules assignment)")
            return
        if isinstance(target, ast.Attribute) or how:
            obj = target.value if isinstance(target, ast.Attribute) else target
            attr = target.attr if isinstance(target, ast.Attribute) else "..."
            root = _root(obj)
            name = _dotted(obj) or ""
            if isinstance(target, ast.Attribute) and attr.startswith("__") \
                    and attr.endswith("__") and attr != "__doc__":
                self.say(f"sets a dunder attribute (.{attr})")
            elif isinstance(root, ast.Name) and root.id in self.imported:
                self.say(f"assigns to an attribute of an imported name ({how}({name}, ...))"
                         if how else f"assigns to an attribute of an imported name "
                         f"({name or root.id}.{attr})")
            elif isinstance(root, ast.Call) and _dotted(root.func) == "type":
                self.say(f"assigns to a class attribute (type(...).{attr})")
            elif isinstance(root, ast.Call) and _dotted(root.func) == "get_ipython":
                self.say("reaches into the kernel or IPython (get_ipython)")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assigned(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assigned(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._assigned(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._assigned(target)
        self.generic_visit(node)


def notebook_flags(nb, source) -> list[str]:
    """Every flag of the code cells of ``nb`` that its student wrote (module docstring):
    every code cell but the release's own, unchanged (``source``: the week's source
    notebook; its cells that are not answers are the release's; the locked ones nbgrader
    puts back anyway). One line per flagged cell: ``<cell>: <flag>; <flag>``."""
    released = set()
    for cell in source.cells:
        meta = cell.get("metadata", {}).get("nbgrader") or {}
        if cell.get("cell_type") == "code" and not meta.get("solution"):
            released.add(cell.get("source", "").strip())
    said = []
    for index, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code" or cell.get("source", "").strip() in released:
            continue
        found = flags(cell.get("source", ""))
        if found:
            grade_id = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")
            where = f"answer cell {grade_id}" if isinstance(grade_id, str) and \
                grade_id.isidentifier() else f"cell {index}"
            said.append(f"{where}: " + "; ".join(found))
    return said
