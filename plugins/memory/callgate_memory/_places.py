"""Where a session's two memory stores live.

- ``project``: ``[memory] project_dir`` (relative to the workspace root), else
  ``<state>/projects/<slug>/memory`` where ``<slug>`` names the workspace's canonical
  path readably plus a short hash of it (``/home/ana/shop`` → ``home-ana-shop-1a2b3c4d``),
  so two checkouts never share a store and a user can still find theirs by eye.
- ``global``: ``[memory] global_dir`` (relative to the state directory), else
  ``<state>/memory/global``.

``<state>`` is `callgate.paths.state_dir()` (``$CALLGATE_HOME`` or the platform's user state
directory).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any

from callgate.paths import state_dir

SLUG_CHARS = 80


def project_slug(workspace_root: str) -> str:
    """A readable, collision-free directory name for one workspace."""
    digest = hashlib.sha256(os.path.normcase(workspace_root).encode("utf-8", "surrogatepass"))
    readable = re.sub(r"[^A-Za-z0-9._]+", "-", workspace_root).strip("-.")[-SLUG_CHARS:]
    return f"{readable.strip('-.') or 'root'}-{digest.hexdigest()[:8]}"


def store_dirs(config: Mapping[str, Any], workspace_root: str) -> dict[str, str]:
    """``{"project": dir, "global": dir}``: absolute paths (they need not exist yet)."""
    project = config.get("project_dir") or ""
    if project:
        project_dir = os.path.join(workspace_root, os.path.expanduser(project))
    else:
        project_dir = os.path.join(state_dir(), "projects", project_slug(workspace_root),
                                   "memory")
    shared = config.get("global_dir") or ""
    if shared:
        global_dir = os.path.join(state_dir(), os.path.expanduser(shared))
    else:
        global_dir = os.path.join(state_dir(), "memory", "global")
    return {"project": os.path.abspath(project_dir), "global": os.path.abspath(global_dir)}
