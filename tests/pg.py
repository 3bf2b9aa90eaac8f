"""A throwaway PostgreSQL for tests: initdb in a temp dir, started on a free local port.

``postgres`` refuses to run as root, so as root the cluster belongs to ``nobody`` (``runuser``).
The unix socket lives in the temp dir; clients connect over TCP on 127.0.0.1. Skipped, saying
why, only when the PostgreSQL binaries are missing (CI installs Debian's ``postgresql``).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Postgres:
    bindir: Path
    datadir: Path
    port: int
    as_user: list[str]

    @property
    def url(self) -> str:
        return f"postgresql://cockpit@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            [*self.as_user, str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-w", *args],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.datadir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._ctl("-o", opts, "-l", str(self.datadir / "log"), "start")

    def stop(self) -> None:
        self._ctl("-m", "fast", "stop")

    def fresh_database(self, name: str) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=cockpit dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://cockpit@127.0.0.1:{self.port}/{name}"


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    bindir = _bindir()
    if bindir is None or not (bindir / "pg_ctl").exists():
        pytest.skip("PostgreSQL binaries not installed (apt-get install postgresql)")
    tmp = Path(tempfile.mkdtemp(prefix="cockpit-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # postgres will not run as root
        as_user = ["runuser", "-u", "nobody", "--"]
        os.chmod(tmp, 0o755)
    datadir = tmp / "data"
    datadir.mkdir()
    if as_user:
        shutil.chown(datadir, "nobody")
    subprocess.run(
        [*as_user, str(bindir / "initdb"), "-D", str(datadir), "-U", "cockpit", "-A", "trust"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    pg = Postgres(bindir, datadir, _free_port(), as_user)
    pg.start()
    try:
        yield pg
    finally:
        try:
            pg.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path) -> str:
    """A fresh store URL on each backend: a SQLite file, then a new database of the session's
    PostgreSQL (a test module imports it with ``postgres``)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/cockpit.db"
    pg = request.getfixturevalue("postgres")
    return pg.fresh_database(f"t{abs(hash(request.node.name)) % 10**9}")
