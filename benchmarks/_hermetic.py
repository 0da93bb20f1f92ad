"""Benchmarks never touch the user's callgate directories: importing this module gives the
process a private, empty callgate state directory (``$CALLGATE_HOME``: session stores,
memory) and user config directory (``$CALLGATE_CONFIG_HOME``), deleted at exit.

Every benchmark module imports it first (``benchmarks/run.py`` does too, and its children
inherit the directories it made), so ``python benchmarks/sessions.py`` run by hand writes
nothing under ``~/.local/state/callgate`` and reads no ``~/.config/callgate/config.toml``:
the figures do not depend on what the user configured. ``tests/benchmarks`` checks both.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

#: set to this process's private state directory once made; a child process that finds
#: its ``$CALLGATE_HOME`` equal to it keeps the directories its parent made
MARK = "CALLGATE_BENCH_PRIVATE_HOME"


def private_dirs() -> tuple[str, str]:
    """Make (once per process tree) and export the private state and config directories."""
    home = os.environ.get("CALLGATE_HOME")
    if home and os.environ.get(MARK) == home and os.path.isdir(home):
        return home, os.environ["CALLGATE_CONFIG_HOME"]
    root = tempfile.mkdtemp(prefix="callgate-bench-home-")
    home, config = os.path.join(root, "state"), os.path.join(root, "config")
    os.mkdir(home)
    os.mkdir(config)
    os.environ["CALLGATE_HOME"] = os.environ[MARK] = home
    os.environ["CALLGATE_CONFIG_HOME"] = config
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return home, config


HOME, CONFIG_HOME = private_dirs()
