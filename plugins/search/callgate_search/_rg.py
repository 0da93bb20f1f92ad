"""Where the ``rg`` binary is: asked once at boot, so it imports nothing of the engines
(issue 38)."""

from __future__ import annotations

import os
import sys

from callgate import process


def find_rg() -> str | None:
    """The ``rg`` binary next to the running interpreter, else on ``PATH`` (never in a
    relative ``PATH`` entry)."""
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return process.which("rg")
