"""Benchmarks are hermetic (issue 38): run by hand or by ``run.py``, a benchmark module
neither writes the user's callgate state directory nor reads the user's config.

A standalone run gets a fake user (``$HOME``, no ``CALLGATE_*`` variables) whose
config directory holds a config that would fail boot: the run must succeed and leave
the fake user's state directory absent.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
MODULES = sorted(p for p in BENCH.glob("[a-z]*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_every_benchmark_module_imports_the_private_dirs_before_callgate(path: Path) -> None:
    imports: list[str] = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            imports += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imports.append(node.module)
    assert "_hermetic" in imports, f"{path.name} does not import _hermetic"
    first = imports.index("_hermetic")
    assert not [m for m in imports[:first] if m.split(".")[0].startswith("callgate")]


def _fake_user(tmp_path: Path, config: str | None) -> dict[str, str]:
    home = tmp_path / "user"
    home.mkdir()
    if config is not None:
        (home / ".config" / "callgate").mkdir(parents=True)
        (home / ".config" / "callgate" / "config.toml").write_text(config)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CALLGATE_", "XDG_"))}
    return {**env, "HOME": str(home)}


def _standalone(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / "pipeline_overhead.py"), "--calls", "20",
                           "--json"], env=env, capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def test_a_standalone_run_writes_no_state_of_the_user(tmp_path: Path) -> None:
    # without the private directory, the sessions it opens are recorded in the user's store
    env = _fake_user(tmp_path, None)
    done = _standalone(env, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (Path(env["HOME"]) / ".local" / "state" / "callgate").exists()


def test_a_standalone_run_reads_no_config_of_the_user(tmp_path: Path) -> None:
    # a user config that fails boot: read, it would end the run
    env = _fake_user(tmp_path, '[sessions]\nrecord = "not a mode"\n')
    done = _standalone(env, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (Path(env["HOME"]) / ".local" / "state" / "callgate").exists()
