"""The set-up files agree with each other: pyproject, constraints, environment.yml, Makefile."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name.lower().replace("_", "-")] = version
    return pins


LEARNER_EXTRAS = ("postgres", "agents", "browser")  # the Makefile's EXTRAS: what every week needs


def environment_yml_pip_list() -> list[str]:
    """The requirements environment.yml's pip section lists (its options left out)."""
    text = (REPO / "environment.yml").read_text()
    section = text.split("  - pip:\n", 1)[1]
    return [line.strip()[2:] for line in section.splitlines()
            if line.strip().startswith("- ") and not line.strip()[2:].startswith("-")]


def test_environment_yml_lists_the_core_and_the_learners_extras_of_pyproject():
    project = _pyproject()["project"]
    wanted = list(project["dependencies"])
    for extra in LEARNER_EXTRAS:
        wanted += project["optional-dependencies"][extra]
    assert sorted(environment_yml_pip_list()) == sorted(wanted)
    text = (REPO / "environment.yml").read_text()
    assert "      - -c constraints.txt" in text and "      - -e .\n" in text


def test_the_makefile_installs_the_learners_extras():
    makefile = (REPO / "Makefile").read_text()
    extras = re.search(r"^EXTRAS \?= (\S+)$", makefile, re.M).group(1).split(",")
    assert tuple(extras) == LEARNER_EXTRAS


def test_every_dependency_and_extra_is_pinned():
    project = _pyproject()["project"]
    wanted = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        wanted += extra
    pins = _pins()
    missing = [_name(d) for d in wanted if _name(d) not in pins]
    assert missing == [], f"not in constraints.txt (run make lock): {missing}"


def test_pins_meet_the_floors_in_pyproject():
    pins = _pins()
    for requirement in _pyproject()["project"]["dependencies"]:
        if ">=" in requirement:
            floor = requirement.split(">=")[1]
            pinned = pins[_name(requirement)]
            as_tuple = lambda v: tuple(int(p) for p in re.findall(r"\d+", v)[:3])  # noqa: E731
            assert as_tuple(pinned) >= as_tuple(floor), requirement


def test_makefile_has_the_promised_targets_and_ci_runs_the_whole_suite():
    makefile = (REPO / "Makefile").read_text()
    for target in ("setup", "lab", "test", "crashtest", "bench", "clean", "release", "check"):
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert re.search(r"^lab: setup", makefile, re.M)
    assert re.search(r"^test: setup", makefile, re.M)
    commands = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
                if line.strip() and not line.strip().startswith("#")]
    assert commands[-1] == "make test-all", "CI must end by running the whole suite"


def test_readme_shows_the_two_commands_and_the_version_floor():
    readme = (REPO / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme
    assert "Python 3.11" in readme
    assert "langgraph" in readme.lower()


def test_every_make_command_the_guides_name_exists():
    """README.md, docs/ and nbgrader_config.py name only targets the Makefile has."""
    makefile = (REPO / "Makefile").read_text()
    targets = {name for line in re.findall(r"^([a-z][a-z -]*):", makefile, re.M)
               for name in line.split()}
    texts = [REPO / "README.md", REPO / "nbgrader_config.py", *sorted((REPO / "docs").glob("*.md"))]
    named = {(path.name, name) for path in texts
             for pair in re.findall(r"`make ([a-z][a-z-]*)\b|^\s+make ([a-z][a-z-]*)\b",
                                    path.read_text(), re.M) for name in pair if name}
    assert named and sorted((f, n) for f, n in named if n not in targets) == []
