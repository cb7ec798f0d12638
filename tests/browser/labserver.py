"""A JupyterLab server for the browser tests, kept away from the user's Jupyter files.

Promises:
- ``isolated_env(base)`` returns a copy of ``os.environ`` in which every folder
  Jupyter, JupyterLab, IPython and matplotlib write to (config, data, runtime,
  lab settings, lab workspaces) lives under ``base``, with lab settings that turn
  autosave off, start a notebook's kernel without asking, and attach every cell to
  the page (so the tests can read all outputs). JupyterLab's news question is left
  alone: ``make lab``'s own settings must turn it off, and the tests check that.
- ``course_copy(repo, dest)`` copies the course (not ``.venv``, ``.git``, caches or
  grading state) to ``dest``, so Run All and the Validate button (which saves the
  notebook first) never write into the repository.
- ``LabServer.start(command, ...)`` runs a command that starts JupyterLab (``python
  -m course.classroom.lab ...`` or ``make lab ...``) in its own process group, logs its output
  to a file, and returns once ``/api/status`` answers; it raises with the log's tail
  if the server exits or does not answer in time. ``stop()`` deletes the sessions
  through the REST API and ends the whole process group.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

# Lab settings written to the isolated JUPYTERLAB_SETTINGS_DIR (not the news: make lab's own).
LAB_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {
        "autoStartDefaultKernel": True,
        "windowingMode": "none",
    },
    "@jupyterlab/apputils-extension/sessionDialogs": {"skipKernelRestartDialog": True},
}

# What a copy of the course leaves out: the environment, history, caches, grading state.
COPY_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", ".pytest_cache", ".ruff_cache", "__pycache__", "*.egg-info",
    ".ipynb_checkpoints", "test-artifacts", "submitted", "autograded", "feedback",
    "exchange", "gradebook.db", ".jupyter-isolated", "checkpoints", "results",
)


def empty_once_per_run(folder: Path, run: str) -> None:
    """Empty ``folder`` unless it was already emptied for ``run`` (a test run's id, which
    every pytest-xdist worker of the run shares): the first worker to ask empties it, the
    others keep what it has written since. A lock file beside the folder orders them."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = folder / ".emptied-for-run"
        if not (marker.is_file() and marker.read_text() == run):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            marker.write_text(run)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def lab_args(port: int, token: str) -> list[str]:
    """Arguments for ``make lab`` (``python -m course.classroom.lab``): port, 127.0.0.1, token."""
    return [f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={token}"]


def isolated_env(base: Path) -> dict[str, str]:
    """Environment for a Jupyter server whose writable folders all live under ``base``."""
    dirs = {
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTER_DATA_DIR": base / "data",
        "JUPYTER_RUNTIME_DIR": base / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": base / "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "lab-workspaces",
        "IPYTHONDIR": base / "ipython",
        "MPLCONFIGDIR": base / "matplotlib",
    }
    for folder in dirs.values():
        folder.mkdir(parents=True, exist_ok=True)
    for plugin, values in LAB_SETTINGS.items():
        target = dirs["JUPYTERLAB_SETTINGS_DIR"] / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values, indent=2))
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env.update({name: str(path) for name, path in dirs.items()})
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("BROWSER", None)
    return env


def course_copy(repo: Path, dest: Path) -> Path:
    """Copy the course at ``repo`` to ``dest`` (which must not exist) and return ``dest``."""
    shutil.copytree(repo, dest, ignore=COPY_IGNORE, symlinks=True)
    return dest


@dataclass
class LabServer:
    """A running JupyterLab server started by ``LabServer.start``."""

    process: subprocess.Popen
    url: str
    token: str
    log_path: Path
    _log: Any = field(repr=False, default=None)
    root: Path | None = None  # the folder it serves, when the caller knows it

    @classmethod
    def start(
        cls,
        command: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        port: int,
        token: str,
        log_path: Path,
        timeout: float = 120.0,
    ) -> LabServer:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log = log_path.open("w")
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        server = cls(process, f"http://127.0.0.1:{port}", token, log_path, log)
        try:
            server._wait_ready(timeout)
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with code {self.process.returncode} before it "
                    f"answered:\n{self.log_tail()}"
                )
            try:
                self.api("GET", "/api/status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.25)
        raise RuntimeError(f"JupyterLab did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        if self._log is not None:
            self._log.flush()
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Any:
        """Call the server's REST API with the token; the decoded JSON answer (or None)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def lab_url(self, path: str = "") -> str:
        """The URL that opens ``path`` (relative to the served folder) in JupyterLab."""
        tail = f"/tree/{path}" if path else ""
        return f"{self.url}/lab{tail}?reset&token={self.token}"

    def delete_sessions(self) -> int:
        """Shut down every kernel session the server has; how many there were."""
        sessions = self.api("GET", "/api/sessions")
        for session in sessions:
            self.api("DELETE", f"/api/sessions/{session['id']}")
        return len(sessions)

    def stop(self) -> None:
        """Delete the sessions, then end the server's whole process group (kernels too)."""
        if self.process.poll() is None:
            # The server may be half-started; ending it is what matters.
            with contextlib.suppress(Exception):
                self.delete_sessions()
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(15)
        self._signal_group(signal.SIGKILL)  # whatever is left of the group
        self.process.wait(5)
        if self._log is not None:
            self._log.close()
            self._log = None

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)
