"""A throwaway PostgreSQL cluster in a temporary folder, for the engine's tests and benchmark (not the lesson).

initdb and pg_ctl from the server binaries on PATH (or /usr/lib/postgresql/*/bin); as root, the server runs as the
user `postgres` (or `nobody`): postgres refuses root. It listens on a unix socket in its folder and on no TCP
address; the port (below 32768, outside Linux's ephemeral range) only names the socket. stop() and start() let a
test take the server away mid-run and bring it back.
"""

from __future__ import annotations

import os
import pwd
import random
import shutil
import subprocess
import tempfile
from pathlib import Path


def server_binaries() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return versions[-1].parent if versions else None


def _user() -> list[str]:
    if os.geteuid() != 0:
        return []
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"]
    raise RuntimeError("running as root without a user named postgres or nobody to run the server as")


class Cluster:
    """initdb in a fresh temporary folder, then start(); url(db) names a database on it (created on first use by
    the caller's DBOS.migrate: DBOS creates the database when it is missing)."""

    def __init__(self) -> None:
        self.bindir = server_binaries()
        if self.bindir is None:
            raise FileNotFoundError("no PostgreSQL server binaries (initdb, pg_ctl)")
        self.folder = Path(tempfile.mkdtemp(prefix="harness-pg-"))
        self.as_user = _user()
        if self.as_user:
            shutil.chown(self.folder, self.as_user[2])
        self.data = self.folder / "data"
        self.port = random.randrange(20000, 32000)
        self.started = False
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-locale", "--no-sync")  # fmt: skip

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*self.as_user, str(self.bindir / tool), *args], capture_output=True, text=True,
                              timeout=120, check=check)  # fmt: skip

    def running(self) -> bool:
        return self._run("pg_ctl", "-D", str(self.data), "status", check=False).returncode == 0

    def start(self) -> None:
        """Start the server (nothing to do when it runs), on the same port as before when it ran before."""
        if self.running():
            return
        # another cluster may have the port's socket name: try another port (not once started: the URLs name it)
        for _ in range(1 if self.started else 5):
            options = f"-k {self.folder} -c listen_addresses= -p {self.port} -F -c max_connections=200"
            proc = self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"), "-w",
                             "start", check=False)  # fmt: skip
            if proc.returncode == 0:
                self.started = True
                return
            if self.started:
                break
            self.port = random.randrange(20000, 32000)
        raise RuntimeError(f"could not start PostgreSQL: {proc.stderr}\n{self.log()}")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def log(self) -> str:
        path = self.folder / "log"
        return path.read_text(errors="replace") if path.exists() else ""

    def url(self, db: str) -> str:
        return f"postgresql://postgres@/{db}?host={self.folder}&port={self.port}"

    def close(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)
