"""A real JupyterHub for the tests, started from ``scripts/hub/jupyterhub_config.py``, and a
small client that talks to it the way each user's browser or extension would.

- :func:`hub_environment`: the hub's environment (``course.term.hub.using``), or a skip
  with its one-line reason; in CI (:func:`ci.in_ci`) a failure, since the hub tests must run.
- :meth:`ClassHub.start`: the hub on free ports on 127.0.0.1, its state and the shared
  exchange in a fresh world-traversable folder under /tmp (every account must reach the
  exchange and its role's Jupyter config), a random class password, its log (the users'
  servers log there too) in ``test-artifacts/hub/<name>.log``. As root, the hub creates a
  real account per user: names carry a random tag, so no existing account is touched.
  ``account=`` (as root) runs the hub as that normal user instead: the configuration's
  other branch, one account and a home per user.
- :meth:`ClassHub.give_course`: the instructor's clone of the course (the tracked files),
  owned by the instructor.
- :meth:`ClassHub.login` (a token from the hub's API for the user's name and the class
  password, the check the login page makes), :meth:`ClassHub.spawn` (the user's own
  server, waited for until the hub reports it ready) and :meth:`ClassHub.call` (an HTTP
  call to that server through the hub's proxy, with that user's token).
- :meth:`ClassHub.stop`: stops every server through the hub's API, then the hub (which
  stops its proxy), then whatever is left of them by process id (servers and proxy from
  the hub's own records; as root, every process of the accounts it created), and as root
  deletes those accounts with their homes. Safe to call more than once.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from ci import in_ci

from course.host.checkout import copy_tracked
from course.term.hub import HubEnv, HubUnavailable, using

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts" / "hub"
COURSE_ID = "crash-resume"


def unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail in CI, where the hub tests must run."""
    if in_ci():
        pytest.fail(f"{reason} (CI: the JupyterHub tests must run here)", pytrace=False)
    pytest.skip(reason)


@contextlib.contextmanager
def hub_environment() -> Iterator[HubEnv]:
    """The hub's environment, held (no rebuild) while the block runs; skips when it
    cannot be installed (see :func:`unavailable`)."""
    problem = ""
    try:
        context = using(REPO)
        env = context.__enter__()
    except HubUnavailable as error:
        problem = str(error)
    if problem:  # outside the except: the skip (or CI's failure) is one line, no chain
        unavailable(f"JupyterHub cannot be installed here: {problem}")
    try:
        yield env
    finally:
        context.__exit__(None, None, None)


def free_ports(count: int) -> list[int]:
    """``count`` different TCP ports on 127.0.0.1 that nothing listens on right now. Their
    sockets stay open until all are chosen: ports picked one after another, each released
    at once, can repeat (the hub and its proxy once got the same one)."""
    with contextlib.ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def http(method: str, url: str, *, token: str | None = None, body=None, form=None,
         timeout: float = 60) -> tuple[int, bytes]:
    """(status, body) of one request; HTTP errors are answers too, redirects are not followed."""
    headers = {"Authorization": f"token {token}"} if token else {}
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@dataclass
class ClassHub:
    env: HubEnv
    state: Path
    exchange: Path
    instructor: str
    students: list[str]
    password: str
    port: int
    process: subprocess.Popen
    log_path: Path
    as_root: bool = True  # the hub runs as root: real accounts (else: homes, one account)
    account: pwd.struct_passwd | None = None  # as root: the normal user that runs the hub
    made_accounts: list[str] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)
    pids: set[int] = field(default_factory=set)

    # ------------------------------------------------------------------ start
    @classmethod
    def start(cls, env: HubEnv, name: str, students: int = 2,
              account: pwd.struct_passwd | None = None) -> ClassHub:
        """Start the hub; as root, ``account`` runs it as that normal user instead (the
        configuration's no-accounts branch)."""
        tag = secrets.token_hex(2)
        instructor = f"hub{tag}-instructor"
        pupils = [f"hub{tag}-{n}" for n in ("ada", "bo")[:students]]
        state = Path(tempfile.mkdtemp(prefix=f"crash-hub-{name}-", dir="/tmp"))
        state.chmod(0o755)
        exchange = state / "exchange"
        ports = free_ports(3)
        password = secrets.token_urlsafe(16)
        root = os.geteuid() == 0 and account is None
        runs_as = {}
        if account is not None:
            os.chown(state, account.pw_uid, account.pw_gid)
            runs_as = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
        missing = [u for u in [instructor, *pupils] if root and not _account(u)]
        hub_env = {  # built from nothing: no PYTHONPATH or virtualenv of the test leaks in
            "PATH": f"{env.bin}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
            "HOME": str(state) if account else os.environ.get("HOME", "/root"),
            "COURSE_HUB_STATE": str(state), "COURSE_EXCHANGE": str(exchange),
            "COURSE_HUB_INSTRUCTOR": instructor, "COURSE_HUB_STUDENTS": " ".join(pupils),
            "COURSE_HUB_PASSWORD": password, "COURSE_HUB_PORT": str(ports[0]),
            "COURSE_HUB_API_PORT": str(ports[1]), "COURSE_HUB_PROXY_API_PORT": str(ports[2]),
            "COURSE_HUB_PROXY": str(env.proxy),
        }
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        log_path = ARTIFACTS / f"{name}.log"
        with open(log_path, "w") as log:
            process = subprocess.Popen(
                [str(env.jupyterhub), "-f", str(env.config)], cwd=state, env=hub_env,
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, **runs_as)
        hub = cls(env, state, exchange, instructor, pupils, password, ports[0], process,
                  log_path, as_root=root, account=account, made_accounts=missing)
        try:
            hub._wait_ready()
        except BaseException:
            hub.stop()
            raise
        return hub

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyterhub exited ({self.process.returncode}):\n"
                                   f"{self.log_tail()}")
            with contextlib.suppress(OSError):
                status, _ = http("GET", f"{self.url}/hub/api/", timeout=5)
                if status == 200:
                    return
            time.sleep(0.3)
        raise RuntimeError(f"the hub did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 60) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    # ------------------------------------------------------------------ users
    def home(self, user: str) -> Path:
        if self.as_root:
            return Path(pwd.getpwnam(user).pw_dir)
        return self.state / "home" / user

    def give_course(self) -> Path:
        """The instructor's clone of the course: the tracked files, owned by the instructor
        (by the hub's one account when it does not run as root)."""
        target = self.home(self.instructor) / COURSE_ID
        copy_tracked(REPO, target)
        owner = pwd.getpwnam(self.instructor) if self.as_root else self.account
        if owner is not None:
            top = target if self.as_root else self.state / "home"
            for path in [top, *top.rglob("*")]:
                os.chown(path, owner.pw_uid, owner.pw_gid, follow_symlinks=False)
        return target

    def login(self, user: str, password: str | None = None) -> str:
        """A token for ``user``, from the hub's API with the class password."""
        status, body = http("POST", f"{self.url}/hub/api/users/{user}/tokens", body={
            "auth": {"username": user, "password": password or self.password},
            "note": "tests/test_jupyterhub.py", "expires_in": 3600})
        if status != 201:
            raise PermissionError(f"login of {user} refused ({status}): {body[:300]!r}")
        self.tokens[user] = json.loads(body)["token"]
        return self.tokens[user]

    def spawn(self, *users: str, timeout: float = 240) -> None:
        """Start each user's own server (all at once) and wait until the hub says every
        one is ready."""
        for user in users:
            status, body = http("POST", f"{self.url}/hub/api/users/{user}/server",
                                token=self.tokens[user])
            assert status in (201, 202), f"spawn {user}: {status} {body[:300]!r}"
        waiting, deadline = set(users), time.monotonic() + timeout
        while waiting and time.monotonic() < deadline and self.process.poll() is None:
            for user in sorted(waiting):
                status, body = http("GET", f"{self.url}/hub/api/users/{user}",
                                    token=self.tokens[user])
                if status == 200 and json.loads(body).get("servers", {}).get("", {}).get("ready"):
                    waiting.discard(user)
            time.sleep(0.5)
        self.pids |= self._server_pids()
        if waiting:
            raise RuntimeError(f"not started: {sorted(waiting)}\n{self.log_tail()}")

    def call(self, user: str, method: str, path: str, *, as_user: str | None = None,
             timeout: float = 120, **kwargs) -> tuple[int, bytes]:
        """``method /user/<user>/<path>`` through the proxy, with ``as_user``'s token (the
        owner's by default)."""
        token = self.tokens[as_user or user]
        return http(method, f"{self.url}/user/{user}/{path.lstrip('/')}", token=token,
                    timeout=timeout, **kwargs)

    def json(self, user: str, method: str, path: str, **kwargs):
        status, body = self.call(user, method, path, **kwargs)
        assert 200 <= status < 300, f"{method} /user/{user}/{path}: {status} {body[:2000]!r}"
        return json.loads(body) if body else None

    # ------------------------------------------------------------------- stop
    def _server_pids(self) -> set[int]:
        """The single-user servers' process ids, from the hub's own database."""
        db = self.state / "private" / "jupyterhub.sqlite"
        found = set()
        with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(db)) as con:
            for (state,) in con.execute("select state from spawners"):
                with contextlib.suppress(TypeError, ValueError):
                    pid = json.loads(state or "{}").get("pid")
                    if pid:
                        found.add(int(pid))
        return found

    def stop(self) -> None:
        """Stop servers, hub and proxy, and (as root) delete the accounts the hub made."""
        if self.process.poll() is None:
            self.pids |= self._server_pids()
            for user, token in self.tokens.items():
                with contextlib.suppress(OSError):
                    http("DELETE", f"{self.url}/hub/api/users/{user}/server", token=token,
                         timeout=60)
            self._signal_group(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(45)
        self._signal_group(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)
        for pid in self.pids:  # servers run in sessions of their own
            if _cmdline(pid) and "jupyterhub-singleuser" in _cmdline(pid):
                self._signal_group(pid, signal.SIGKILL)
        proxy_pid = self.state / "private" / "proxy.pid"
        with contextlib.suppress(OSError, ValueError):
            pid = int(proxy_pid.read_text().strip())
            if "configurable-http-proxy" in _cmdline(pid):
                os.kill(pid, signal.SIGKILL)
        for user in self.made_accounts:
            _end_account(user)
        self.made_accounts = []
        shutil.rmtree(self.state, ignore_errors=True)

    @staticmethod
    def _signal_group(pid: int, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)


def _account(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _end_account(name: str) -> None:
    """Kill every process of an account this test created, then delete it and its home."""
    if not _account(name):
        return
    uid = pwd.getpwnam(name).pw_uid
    for _ in range(20):
        left = [int(p.name) for p in Path("/proc").iterdir()
                if p.name.isdigit() and _owner(p) == uid]
        if not left:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
    userdel = shutil.which("userdel") or "/usr/sbin/userdel"
    subprocess.run([userdel, "--remove", name], capture_output=True, check=False)


def _owner(proc: Path) -> int | None:
    try:
        return proc.stat().st_uid
    except OSError:
        return None
