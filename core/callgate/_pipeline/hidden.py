"""Hidden paths: what a sandbox must not show a session's commands at all.

Protected paths (`_files.protected`) are shown read-only; these are not shown, because
reading them is the harm: the session store holds every recorded session of every
workspace and principal on this machine (other projects' secrets, other tokens'
calls), and the state directory and the user config directory hold the rest of
callgate's own state and the user's trust decisions. So a sandbox replaces:

- callgate's state directory (`callgate.paths.state_dir`: ``$CALLGATE_HOME`` or the
  platform's), where the default session store, memory stores and the like live;
- the user config directory (``$CALLGATE_CONFIG_HOME`` or the platform's);
- the session store's file, with its ``-wal``/``-shm``/``-journal`` companions, when
  ``[sessions] store`` puts it elsewhere (a URL's store is not a path: nothing to hide);

with an empty read-only place (a directory) or an empty file. Paths inside one of
them that a session must reach (its workspace, say) are shown again on top.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from .._fs.workspace import within

if TYPE_CHECKING:
    from .view import SessionView

#: the companions SQLite keeps next to a database file
STORE_SIDECARS = ("", "-wal", "-shm", "-journal")
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def hidden_paths(session: SessionView) -> list[str]:
    """The existing paths a sandbox hides from ``session``'s commands, canonical and
    sorted: directories to replace with an empty one, files with an empty file."""
    from .._config.layers import user_config_dir
    from .._config.state import state_dir

    directories = [state_dir()]
    config_dir = user_config_dir()
    if config_dir:
        directories.append(config_dir)
    out: set[str] = set()
    for directory in directories:
        real = os.path.realpath(directory)
        if real != "/" and os.path.isdir(real):
            out.add(real)
    location = _store_file(session)
    if location is not None and not any(within(location, d) for d in out):
        for suffix in STORE_SIDECARS:
            path = location + suffix
            if os.path.isfile(path):
                out.add(os.path.realpath(path))
    return sorted(out)


def _store_file(session: SessionView) -> str | None:
    """The session store's file, when the store is one (not a URL, not off)."""
    try:
        location = session.host.store_location
    except Exception:  # a store the config cannot name is not one a command can read
        return None
    if _URL.match(location):
        scheme = location.split("://", 1)[0].lower()
        if scheme not in ("file", "sqlite"):
            return None
        location = location.split("://", 1)[1]
    return os.path.realpath(location)


__all__ = ["STORE_SIDECARS", "hidden_paths"]
