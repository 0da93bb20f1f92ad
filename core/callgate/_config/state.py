"""Where callgate keeps state that outlives a session (memory, durable sessions, ...).

One directory per user: ``$CALLGATE_HOME`` when it is set (tests, sandboxes, a
portable install), else the platform's user state directory for ``callgate``
(``~/.local/state/callgate`` on Linux, ``~/Library/Application Support/callgate``
on macOS, ``%LOCALAPPDATA%\\callgate`` on Windows). It is not created here: a
plugin makes the subdirectory it writes, when it first writes.
"""

from __future__ import annotations

import os

HOME_VARIABLE = "CALLGATE_HOME"


def state_dir() -> str:
    """The absolute path of callgate's per-user state directory (not created)."""
    configured = os.environ.get(HOME_VARIABLE, "").strip()
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    import platformdirs  # imported on first use: boot stays cheap

    return os.path.abspath(platformdirs.user_state_dir("callgate", appauthor=False))
