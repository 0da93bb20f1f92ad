"""A throwaway installed plugin for CLI subprocess tests.

``callgate replay`` and ``callgate contract`` load plugins from entry points
only, so a test that needs its own tools in a subprocess writes a tiny
distribution (a module plus a ``.dist-info`` with ``entry_points.txt``) into a
temp directory on ``PYTHONPATH`` and limits loading to it with
``CALLGATE_LOAD_PLUGINS``. Nothing is installed into the shared environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def make_plugin(directory: Path, name: str, source: str) -> dict[str, str]:
    """Write module ``<name>_plugin`` (exposing ``plugin``) as entry point ``name``.

    Returns the environment for a subprocess that loads only this plugin.
    """
    module = f"{name}_plugin"
    (directory / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = directory / f"{module}-0.0.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.0.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[callgate]\n{name} = {module}:plugin\n",
                                           encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(directory), str(REPO)])
    env["CALLGATE_LOAD_PLUGINS"] = name
    env.pop("CALLGATE_DISABLE_PLUGINS", None)
    return env


def callgate(*args: str, env: dict[str, str], cwd: str | Path | None = None,
             stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m callgate_cli ARGS`` and capture its output."""
    return subprocess.run([sys.executable, "-m", "callgate_cli", *args], env=env,
                          cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120)
