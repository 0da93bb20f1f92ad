"""The keys the files plugin adds to the core's ``[files]`` table (files.md, "Config")."""

from __future__ import annotations

from typing import Any

#: The keys the files plugin adds to the core's ``[files]`` table (files.md, "Config"; the
#: core declares and enforces ``read_denylist``, ``protected``, ``allow_protected``,
#: ``encodings``, ``max_edit_bytes`` and ``stale_detail`` itself, whichever file tools are
#: loaded). ``x-workspace`` (callgate's config layering): what a workspace config the user
#: config does not trust may do.
CONFIG_KEYS: dict[str, Any] = {
    # the model is told when an observed file changes: a workspace may not turn it off
    "watch": {"type": "boolean", "default": True, "x-workspace": [False, True]},
}
