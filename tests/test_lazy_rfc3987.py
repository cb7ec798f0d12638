"""The lazy ``rfc3987_syntax`` stand-in (:mod:`course.base.lazy_rfc3987`): importing
nbformat no longer builds the IRI parser, and jsonschema's IRI checks answer as before.

Each check runs in a fresh interpreter: the point is what a new process imports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from course.base import lazy_rfc3987

ROOT = Path(__file__).resolve().parent.parent
# The real package: its parser lives in syntax_helpers (the stand-in holds only the name).
HEAVY = ("lark", "rfc3987_syntax.syntax_helpers")
IRIS = ["http://example.com/caf\u00e9?q=\u00fc#frag", "urn:isbn:0451450523",
        "mailto:marta@example.com", "not an iri", "http://exa mple.com", "", "//host/path",
        "/relative/path", "?query", "http://[::1]:80/", "http://[::1", "%zz"]


def fresh(code: str, *, site_dir: Path | None = None, hooks: bool = False) -> dict:
    """Run ``code`` in a new interpreter (the course importable); it prints one JSON value.

    By default the interpreter starts without ``site`` (``-S``) and gets this environment's
    packages on its path without their ``.pth`` files: an environment where ``make setup``
    never wrote the start-up hook (``site_dir``: a folder whose ``.pth`` files do run;
    ``hooks``: start as this environment normally starts)."""
    prelude = "" if hooks else (
        f"import sys; sys.path.append({sysconfig.get_paths()['purelib']!r})\n")
    if site_dir:
        prelude += f"import site; site.addsitedir({str(site_dir)!r})\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, *([] if hooks else ["-S"]), "-c", prelude + code],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr  # the start-up hook never says anything
    return json.loads(done.stdout)


LOADED = "import json, sys; print(json.dumps([m for m in {heavy!r} if m in sys.modules]))"


def test_the_pth_line_keeps_the_iri_parser_out_of_an_nbformat_import(tmp_path):
    """What ``make setup`` installs: site runs the .pth line, then nbformat imports light."""
    pth = lazy_rfc3987.write_pth(tmp_path)
    assert pth.name.endswith(".pth") and pth.read_text() == lazy_rfc3987.PTH_LINE
    assert lazy_rfc3987.write_pth(tmp_path).stat().st_mtime_ns == pth.stat().st_mtime_ns
    code = "import nbformat, jsonschema\n" + LOADED.format(heavy=HEAVY)
    assert fresh(code, site_dir=tmp_path) == []
    assert fresh(code) == list(HEAVY)  # without the hook, the parser is built at import
    assert fresh(code, hooks=True) == ([] if installed_in_this_venv() else list(HEAVY))


def test_the_pth_line_is_silent_when_the_course_cannot_be_imported(tmp_path):
    (tmp_path / lazy_rfc3987.PTH_NAME).write_text(lazy_rfc3987.PTH_LINE.replace(
        "course.base.lazy_rfc3987", "course.base.no_such_module"))
    done = subprocess.run([sys.executable, "-c", f"import site; site.addsitedir("
                           f"{str(tmp_path)!r}); import nbformat; print('ok')"],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


def installed_in_this_venv() -> bool:
    return Path(sysconfig.get_paths()["purelib"], lazy_rfc3987.PTH_NAME).is_file()


@pytest.mark.skipif(not installed_in_this_venv(),
                    reason="make setup has not written the start-up .pth into this virtualenv")
def test_this_virtualenv_imports_nbformat_without_the_iri_parser():
    assert fresh("import nbformat\n" + LOADED.format(heavy=HEAVY), hooks=True) == []


def test_the_grading_entry_points_install_it_themselves():
    code = ("import course.grader.autograde, course.term.instructor, "
            "course.term.classgrade\n" + LOADED.format(heavy=HEAVY))
    assert fresh(code) == []


def test_jsonschema_checks_iris_exactly_as_with_the_real_package():
    """Same answers as the real parser for valid and invalid IRIs and IRI references; the
    real package is imported on the first check, and only then."""
    code = f"""
import json, sys
from course.base.lazy_rfc3987 import install
installed = install()
import jsonschema
before = [m for m in {HEAVY!r} if m in sys.modules]
checker = jsonschema.FormatChecker()
lazy = {{f: [checker.conforms(v, f) for v in {IRIS!r}] for f in ("iri", "iri-reference")}}
schema = {{"type": "string", "format": "iri"}}
errors = [bool(list(jsonschema.Draft202012Validator(schema, format_checker=checker)
                    .iter_errors(v))) for v in {IRIS!r}]
import rfc3987_syntax
real = {{f: [rfc3987_syntax.is_valid_syntax(f.replace("-", "_"), v) for v in {IRIS!r}]
        for f in ("iri", "iri-reference")}}
print(json.dumps({{"installed": installed, "before": before, "lazy": lazy, "real": real,
                  "errors": errors, "is_real": hasattr(rfc3987_syntax, "syntax_parser"),
                  "after": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""
    out = fresh(code)
    assert out["installed"] is True
    assert out["before"] == []  # jsonschema imported, parser not built
    assert out["lazy"] == out["real"]
    assert out["lazy"]["iri"][:3] == [True, True, True]  # valid IRIs accepted
    assert out["lazy"]["iri"][3:5] == [False, False]  # invalid ones rejected
    assert out["errors"] == [not ok for ok in out["real"]["iri"]]
    assert out["is_real"] and out["after"] == list(HEAVY)


def test_install_is_idempotent_and_steps_aside_for_the_real_module():
    code = """
import json, sys
import rfc3987_syntax
from course.base.lazy_rfc3987 import install
print(json.dumps([install(), install(), hasattr(sys.modules["rfc3987_syntax"], "parse")]))
"""
    assert fresh(code) == [False, False, True]
    code = """
import json
from course.base.lazy_rfc3987 import install, real_module
first, second = install(), install()
import importlib.util, rfc3987_syntax.utils  # a submodule imports without the parser
print(json.dumps([first, second, importlib.util.find_spec("rfc3987_syntax").name,
                  real_module().is_valid_syntax("iri", "http://x.org/")]))
"""
    assert fresh(code) == [True, True, "rfc3987_syntax", True]
