"""A throwaway PostgreSQL server for the tests: Debian's ``postgresql`` binaries, a data
directory and a unix socket in a private temp directory, no TCP port at all.

PostgreSQL refuses to run as root, so under root the server runs as ``nobody`` (through
``runuser``, else ``setpriv``) in a directory that user owns. `find_bin_dir` is ``None``
when the binaries are not installed (``.ci/run`` installs them); the tests then skip and
say so.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

USER = "callgate"  # the database superuser initdb creates
PORT = 5432  # names the socket file only: the server listens on no TCP address


def find_bin_dir() -> str | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(candidate, "initdb")):
            return candidate
    return None


def _as_user(argv: list[str], user: str | None) -> list[str]:
    if user is None:
        return argv
    if shutil.which("runuser"):
        return ["runuser", "-u", user, "--", *argv]
    entry = pwd.getpwnam(user)
    return [
        "setpriv",
        f"--reuid={entry.pw_uid}",
        f"--regid={entry.pw_gid}",
        "--clear-groups",
        *argv,
    ]


class PgServer:
    """One running server; `url` names a database on it."""

    def __init__(self, bin_dir: str) -> None:
        self.bin_dir = bin_dir
        self.user = "nobody" if os.geteuid() == 0 else None
        self.root = tempfile.mkdtemp(prefix="callgate-pg-")
        self.data = os.path.join(self.root, "data")
        self.socket_dir = os.path.join(self.root, "sock")
        os.mkdir(self.socket_dir)
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            for path in (self.root, self.socket_dir):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        os.chmod(self.root, 0o755)
        self._databases = 0

    def _run(self, name: str, *args: str) -> None:
        argv = _as_user([os.path.join(self.bin_dir, name), *args], self.user)
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            cwd=self.root,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{name} failed ({proc.returncode}): {proc.stderr.strip()}")

    def start(self) -> None:
        self._run(
            "initdb",
            "-D",
            self.data,
            "-U",
            USER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        options = (
            f"-k {self.socket_dir} -p {PORT} -c listen_addresses='' -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            "pg_ctl",
            "-D",
            self.data,
            "-o",
            options,
            "-l",
            os.path.join(self.root, "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@/{database}?host={self.socket_dir}&port={PORT}"

    def new_database(self) -> str:
        """A fresh, empty database's URL."""
        import psycopg

        self._databases += 1
        name = f"t{os.getpid()}_{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextlib.contextmanager
def running_server() -> Iterator[PgServer]:
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise LookupError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    server = PgServer(bin_dir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
