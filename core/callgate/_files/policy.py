"""The core's ``[files]`` table: the keys the host enforces on every tool that reads or
writes files, whichever plugin brought the tool.

The core declares and reads these seven keys itself (a host whose only file tool is a
third party's still hides what ``read_denylist`` hides and refuses writes to what
``protected`` names); a file-tool family may add keys of its own to the table
(``Registry.extend_config``: callgate-files' ``watch``).

- `FilesPolicy`: the table compiled once per host (the deny list switch, the edit limit,
  stale details, declared and fallback encodings, protected paths).
- `FileScope` (`_files.scope`): one session's files under this policy.
"""

from __future__ import annotations

import fnmatch
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the rest is imported where used: a listing boot builds a policy only
    from .declared import Rules
    from .protected import Protection

TABLE = "files"
#: files.md: mutations refuse files (and contents) above ``[files] max_edit_bytes``.
DEFAULT_MAX_EDIT_BYTES = 64 << 20

#: The keys of ``[files]`` the core enforces (files.md, "Config"). ``x-workspace``: what a
#: workspace config the user config does not trust may do with each (`_config.layers`).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "max_edit_bytes": {
            "type": "integer",
            "minimum": 1,
            "default": DEFAULT_MAX_EDIT_BYTES,
            "x-workspace": "min",
            "x-kind": "limit",
        },
        # the model is told what changed since its read: a workspace may not turn it off
        "stale_detail": {"type": "boolean", "default": True, "x-workspace": [False, True]},
        "read_denylist": {"type": "boolean", "default": False, "x-workspace": [False, True]},
        # refused by the host gate, mounted read-only by the sandbox (`_files.protected`)
        "protected": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [],
            "x-workspace": "add",
            "x-kind": "denylist",
        },
        "allow_protected": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [],
            "x-workspace": "user",
            "x-layers": "concat",
            "x-kind": "allowlist",
        },
        # path glob → encoding (issue 26), for every decoding (`_files.declared`). User-only:
        # it decides the bytes every edit writes, which the model never sees
        "encodings": {
            "type": "object",
            "default": {},
            "x-workspace": "user",
            "additionalProperties": {"type": "string", "minLength": 1},
        },
        # encodings tried in order for a file that is not UTF-8 and declares nothing
        # (issue 36); user-only for the same reason as encodings; each one is checked at
        # boot (`_files.declared.fallback_problem`)
        "fallback_encodings": {
            "type": "array",
            "default": [],
            "x-workspace": "user",
            "items": {"type": "string", "minLength": 1},
        },
    },
}

#: files.md §2: names the read deny list hides (any component below a root; any case).
DENIED_NAMES = (".env*", ".git-credentials", ".netrc", "*.pem", "*.key", "*.p12", "*.pfx")
_DENIED_NAME = re.compile("|".join(fnmatch.translate(p) for p in DENIED_NAMES), re.IGNORECASE)


def denied_name(name: str) -> bool:
    """Whether a file or directory name is on the read deny list."""
    return _DENIED_NAME.match(name) is not None


class ReadDenylist:
    """``[files] read_denylist``: paths no reader may show (answered as "not found").

    One check for every reader: read_file, the mutations' reads, grep, glob, ls,
    code_index, view_image and any plugin reading through `FileAccess`; walkers call
    `denies` for each entry they meet and do not enter a denied directory.
    """

    def __init__(self) -> None:
        from .._fs.workspace import ResolvedPath  # with the first reader, not at boot

        self._resolved = ResolvedPath
        self._ssh = os.path.realpath(os.path.expanduser("~/.ssh"))

    def _in_ssh(self, path: str) -> bool:
        return path == self._ssh or path.startswith(self._ssh + os.sep)

    def denies(self, path: str | os.PathLike[str]) -> bool:
        """A `ResolvedPath`: any component below its root, by its canonical and its lexical
        name, or inside ``~/.ssh``. A path string (a walk's entry): its final name, or
        inside ``~/.ssh``."""
        if isinstance(path, self._resolved):
            if any(denied_name(part) for part in path.rel.split(os.sep) if part):
                return True
            if denied_name(os.path.basename(path.lexical)):
                return True
            return self._in_ssh(path.path) or self._in_ssh(path.lexical)
        text = os.fspath(path)
        return denied_name(os.path.basename(text)) or self._in_ssh(text)


class FilesPolicy:
    """One host's ``[files]`` table, as the gate and the file API apply it. Protected
    paths are compiled on first use (boot stays cheap), once per host."""

    def __init__(
        self,
        table: Mapping[str, Any] | None = None,
        source: Any = None,
        claimed: Sequence[tuple[str, str]] = (),
    ) -> None:
        """``table``: the validated ``[files]`` table (defaults applied); ``source``: the
        host's config source (the files it loaded are protected, and the workspaces it
        trusts); ``claimed``: the ``(pattern, why)`` paths plugins protect
        (`Registry.protect`)."""
        table = table or {}
        self.table: Mapping[str, Any] = table
        self.read_denylist = bool(table.get("read_denylist", False))
        self.max_edit_bytes = int(table.get("max_edit_bytes", DEFAULT_MAX_EDIT_BYTES))
        self.stale_detail = bool(table.get("stale_detail", True))
        self.encodings: Rules = ()
        if table.get("encodings"):  # the rule compiler loads for a table that declares some
            from .declared import encoding_rules

            self.encodings = encoding_rules(table.get("encodings"))
        self.fallback_encodings: tuple[str, ...] = tuple(table.get("fallback_encodings") or ())
        self._source = source
        self._claimed = tuple(claimed)
        self._protection: Protection | None = None
        self._lock = threading.Lock()

    @property
    def protection(self) -> Protection:
        """What no write tool may change (`_files.protected`)."""
        found = self._protection
        if found is None:
            with self._lock:
                if self._protection is None:
                    from .protected import protection_of

                    self._protection = protection_of(self.table, self._source, self._claimed)
                found = self._protection
        return found


__all__ = [
    "DEFAULT_MAX_EDIT_BYTES",
    "DENIED_NAMES",
    "SCHEMA",
    "TABLE",
    "FilesPolicy",
    "ReadDenylist",
    "denied_name",
]
