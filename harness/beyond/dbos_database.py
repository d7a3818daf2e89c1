"""The DBOS engine's system database (harness/beyond/engine_dbos.py): where it is (a URL, or dbos.sqlite in the work
folder), how messages show it (never with a password, in any spelling), and whether it answers now.

It imports SQLAlchemy and dbos: only the engine imports it.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from dbos import DBOS
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from .. import texts
from ..errors import HarnessError
from ..transcript import untrusted
from ..vocab import DB_FILE, DB_FILES

DATABASE_ERRORS = (SQLAlchemyError, sqlite3.Error)
# Query parameters of a URL shown as they are; any other value (password=, sslpassword=, ...) is shown as ***
SHOWN_QUERY = ("host", "port", "dbname", "sslmode", "connect_timeout", "application_name", "uri", "mode")
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """Text with every secret of the database URL (in each of its spellings) replaced by ***."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "***")
        elif secret:  # a short one only where it stands alone (as in a URL), so the message stays readable
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", "***", text)
    return text


def database_detail(err: BaseException, secrets: tuple[str, ...]) -> str:
    """The driver's own words for a database error, on one line, safe for a terminal and without the password."""
    orig = getattr(err, "orig", None) or err
    text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    return untrusted(scrub(text, secrets))


@dataclass
class Database:
    """The system database: the URL DBOS is given, how messages show it, and what kind it is."""

    url: str
    shown: str
    sqlite: Path | None = None  # the SQLite file, when it is one
    default: bool = False  # the work folder's own dbos.sqlite
    secrets: tuple[str, ...] = field(default_factory=tuple)

    @property
    def lock_file(self) -> Path | None:
        """Beside a SQLite file given by URL (the work folder's own database is held by the folder's lock)."""
        return (
            None if self.sqlite is None or self.default else self.sqlite.with_name(self.sqlite.name + "-lock")
        )


def sqlite_uri(path: Path) -> str:
    """SQLite's URI filename for this file, percent-encoded from the path's bytes: whatever the path holds (`?`, `#`,
    `%41`, spaces, bytes that are not UTF-8), SQLite opens exactly this file."""
    return "file:" + urllib.parse.quote(os.fsencode(path), safe="/")


def sqlite_url(path: Path) -> str:
    """A SQLAlchemy URL for this SQLite file: its URI filename, percent-encoded once more for the URL."""
    url = sa.engine.URL.create("sqlite", database=sqlite_uri(path), query={"uri": "true"})
    return url.render_as_string(hide_password=False)


def default_database(workdir: Path) -> Database:
    path = workdir.resolve() / DB_FILE
    return Database(sqlite_url(path), DB_FILE, path, default=True)


def database_target(options, env, workdir: Path) -> Database:
    """--database-url, else HARNESS_DATABASE_URL, else dbos.sqlite in the work folder; refused up front (with the
    reason, never the password) when the engine could not use it."""
    url = getattr(options, "database_url", None) or env.get("HARNESS_DATABASE_URL")
    if not url:
        return default_database(workdir)
    db = parse_database_url(url)
    if (
        db.sqlite is not None
    ):  # the work folder's files are the harness's: a database given by URL stays outside
        folder, file = os.path.realpath(workdir), os.path.realpath(db.sqlite)
        if os.path.commonpath([folder, file]) == folder:
            raise HarnessError(texts.DBOS_URL_IN_WORKDIR.format(db=db.shown, path=workdir))
    return db


def url_secrets(url: str) -> tuple[str, ...]:
    """Every spelling of every secret a URL may carry, read without trusting its shape: the userinfo after the first
    `:` up to the LAST `@` of the authority (a password with an unencoded @ included), and each query value that is
    not a plain connection setting. Raw and percent-decoded, each."""
    found: list[str] = []
    _, _, rest = url.partition("://")
    before_query, _, query = rest.partition("?")
    if "@" in before_query:  # userinfo up to the last @ (a password may hold / or @ unencoded)
        userinfo = before_query.rsplit("@", 1)[0]
        if ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
    for part in re.split(r"[&;]", query):
        key, _, value = part.partition("=")
        if value and urllib.parse.unquote(key).strip().lower() not in SHOWN_QUERY:
            found.append(value)
    spelled = {
        *found,
        *(urllib.parse.unquote(s) for s in found),
        *(urllib.parse.unquote_plus(s) for s in found),
    }
    return tuple(s for s in spelled if s)


def _shown(u: sa.engine.URL, scheme: str) -> str:
    """A parsed URL as messages show it: the password and every query value but plain settings as ***."""
    user = u.username or ""
    auth = f"{user}{':***' if u.password is not None else ''}@" if user or u.password is not None else ""
    host = u.host or ""
    host = f"[{host}]" if ":" in host else host
    port = f":{u.port}" if u.port is not None else ""
    query = "&".join(
        f"{k}={v if k.lower() in SHOWN_QUERY else '***'}"
        for k, values in u.query.items()
        for v in (values if isinstance(values, tuple) else (values,))
    )
    return untrusted(f"{scheme}://{auth}{host}{port}/{u.database or ''}{'?' + query if query else ''}")


def parse_database_url(url: str) -> Database:
    secrets = url_secrets(url)
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()

    def refuse(reason: str, shown: str | None = None):
        shown = shown or untrusted(f"{scheme}://…" if sep else "…")
        return HarnessError(scrub(texts.DBOS_BAD_URL.format(url=shown, reason=texts.DBOS_URL_REASONS[reason]),
                                  secrets))  # fmt: skip

    if not sep or scheme not in (*POSTGRES_SCHEMES, "sqlite"):
        raise refuse("scheme", untrusted(scheme + "://…") if sep else None)
    authority = rest.split("/", 1)[0].split("?", 1)[0]
    if authority.count("@") > 1:
        raise refuse("at")
    hostport = authority.rsplit("@", 1)[-1]
    if hostport.startswith("[") and "]" not in hostport:
        raise refuse("bracket")
    port = hostport.rsplit("]", 1)[-1] if hostport.startswith("[") else hostport
    if ":" in port and not re.fullmatch(r"[0-9]{1,5}", port.split(":", 1)[1]):
        raise refuse("port")
    driver = "postgresql+psycopg" if scheme in POSTGRES_SCHEMES else "sqlite"
    try:
        u = sa.make_url(f"{driver}://{rest}")
        port = u.port
        query_port = u.query.get("port")
        query_mode = u.query.get("mode")
    except (ArgumentError, ValueError, TypeError):
        raise refuse("unreadable") from None
    shown = _shown(u, "postgresql" if driver != "sqlite" else "sqlite")
    if driver == "sqlite":
        if query_mode == "memory":
            raise refuse("memory", shown)
        return _sqlite_database(u, shown, secrets, refuse)
    ports = [port] if port is not None else []
    for value in query_port if isinstance(query_port, tuple) else ([query_port] if query_port else []):
        ports += [int(v) if v.strip().isdigit() else -1 for v in value.split(",")]
    if any(not 1 <= p <= 65535 for p in ports):
        raise refuse("port", shown)
    if not u.database:
        raise refuse("no_database", shown)
    if (
        "connect_timeout" not in u.query
    ):  # no connection attempt may outlast the deadline (libpq waits forever)
        u = u.update_query_dict({"connect_timeout": "5"})
    return Database(u.render_as_string(hide_password=False), shown, secrets=secrets)


def _sqlite_database(u: sa.engine.URL, shown: str, secrets: tuple[str, ...], refuse) -> Database:
    database = u.database or ""
    uri = str(u.query.get("uri", "")).lower() in ("true", "1")
    if uri and database.startswith("file:"):
        parts = urllib.parse.urlsplit(database)
        query = urllib.parse.parse_qs(parts.query)
        if "memory" in query.get("mode", []) or parts.path in ("", ":memory:"):
            raise refuse("memory" if parts.path in (":memory:",) or query.get("mode") else "no_file", shown)
        path = Path(os.fsdecode(urllib.parse.unquote_to_bytes(parts.path)))
    elif database in ("", ":memory:") or str(u.query.get("mode", "")) == "memory":
        raise refuse("memory" if database else "no_file", shown)
    else:
        path = Path(database)
    path = path if path.is_absolute() else Path.cwd() / path
    if re.match(r"/+(?:dev|proc|sys)(?:/|$)", os.path.normpath(path)):
        raise refuse("not_a_file", shown)  # /dev/stdout leads to the terminal or whatever stdout was sent to
    for name in (path.name, *(path.name + tail for tail in ("-journal", "-wal", "-shm", "-lock"))):
        try:  # SQLite writes its pages into whatever is there: /dev/stdout, a FIFO (and blocks), a folder's name
            odd = not stat.S_ISREG(os.stat(path.with_name(name)).st_mode)
        except FileNotFoundError:
            continue
        except OSError:
            odd = True
        if odd:
            raise refuse("not_a_file", shown)
    return Database(sqlite_url(path), shown, path, secrets=secrets)


def refuse_odd_database_files(folder: Path) -> None:
    """The default system database and SQLite's files beside it must be plain files of their own (or absent): SQLite
    follows a link, opens a FIFO and blocks, and writes through a hard link into a file somewhere else."""
    for name in DB_FILES:
        try:
            info = os.lstat(folder / name)
        except FileNotFoundError:
            continue
        except OSError as err:
            kind = err.strerror or type(err).__name__
            raise HarnessError(texts.DBOS_DB_NOT_PLAIN.format(name=name, kind=kind)) from None
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
            continue
        kind = ("link" if stat.S_ISLNK(info.st_mode) else "folder" if stat.S_ISDIR(info.st_mode)
                else "hardlink" if stat.S_ISREG(info.st_mode) else "other")  # fmt: skip
        raise HarnessError(texts.DBOS_DB_NOT_PLAIN.format(name=name, kind=texts.DBOS_DB_KINDS[kind]))


def file_id(path: Path | None) -> tuple[int, int] | None:
    try:
        info = os.lstat(path) if path is not None else None
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if info is not None and stat.S_ISREG(info.st_mode) else None


def probe(db: Database) -> str | None:
    """None when the database takes a write right now; the driver's words when it is away or locked (worth waiting
    for). Any other error (a file that is not a database, one that cannot be opened) is raised: waiting would not
    help."""
    try:
        if db.sqlite is not None:
            if not db.sqlite.exists():
                return None  # not created yet (DBOS creates it): nothing to wait for
            con = sqlite3.connect(sqlite_uri(db.sqlite) + "?mode=rw", uri=True, timeout=1.0)
            try:
                con.execute("BEGIN IMMEDIATE")  # the write lock another program may hold
                con.execute("ROLLBACK")
            finally:
                con.close()
            return None
        engine = sa.create_engine(db.url, poolclass=sa.NullPool)
        try:
            with engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        finally:
            engine.dispose()
        return None
    except sqlite3.Error as err:
        if _busy(err):
            return database_detail(err, db.secrets)
        raise
    except (
        sa.exc.OperationalError
    ) as err:  # PostgreSQL: no connection (a server away, a name that does not answer)
        return database_detail(err, db.secrets)


def ready(db: Database) -> str | None:
    """At start: None once the database is there with DBOS's schema (DBOS creates both when missing)."""
    problem = probe(db) if db.sqlite is not None else None
    if problem is None:
        try:
            DBOS.migrate(db.url)
        except sa.exc.OperationalError as err:
            if db.sqlite is not None and not _busy(err):
                raise
            return database_detail(err, db.secrets)
    return problem


def _busy(err: BaseException) -> bool:
    orig = getattr(err, "orig", None) or err
    return getattr(orig, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED")


def is_away(err: BaseException, db: Database) -> bool:
    """Whether a database error means "not reachable now" (worth waiting for) rather than "broken"."""
    if db.sqlite is not None:
        return _busy(err)
    orig = getattr(err, "orig", None) or err
    return (
        getattr(err, "connection_invalidated", False)
        or isinstance(err, sa.exc.OperationalError)
        or (type(orig).__name__ == "OperationalError" and type(orig).__module__.startswith("psycopg"))
    )


def is_damaged(err: BaseException) -> bool:
    """Whether a database error says the SQLite file is not a database (or a damaged one)."""
    orig = getattr(err, "orig", None) or err
    return getattr(orig, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT")
