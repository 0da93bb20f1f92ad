"""Which changed files a server is told about (``workspace/didChangeWatchedFiles``).

A server that wants file events registers watchers dynamically (``client/registerCapability``
with ``workspace/didChangeWatchedFiles``: glob patterns, plain or relative to a base
folder, and the kinds it wants: create 1, change 2, delete 4). Its registrations decide, and
``client/unregisterCapability`` withdraws them. A server that registered none (clangd, for
one) is told about the files of its own extensions: an unhandled notification costs a server
nothing, and one that reads other files from disk then sees them change.

Patterns are matched with callgate's one glob dialect (`callgate.paths.compile_glob`: ``*``,
``?``, ``**``, ``{a,b}``, ``[...]``, LSP's own syntax) against the workspace-relative path and
the absolute one; a pattern with no ``/`` matches the file name at any depth.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
from callgate.paths import Glob, GlobError, compile_glob
from lsprotocol import types
from pygls.uris import to_fs_path

log = logging.getLogger("callgate.lsp")

CREATE, CHANGE, DELETE = 1, 2, 4
ALL_KINDS = CREATE | CHANGE | DELETE
#: LSP's FileChangeType of each kind of change, and the WatchKind bit it needs
EVENT_TYPES = {"created": (types.FileChangeType.Created, CREATE),
               "changed": (types.FileChangeType.Changed, CHANGE),
               "deleted": (types.FileChangeType.Deleted, DELETE)}


@attrs.frozen
class Watcher:
    """One registered pattern: matched below ``base`` (a directory), or, without one, against
    the workspace-relative and the absolute path."""

    glob: Glob
    kinds: int
    base: str | None = None

    def matches(self, path: str, rel: str | None) -> bool:
        if self.base is not None:
            if not (path == self.base or path.startswith(self.base.rstrip(os.sep) + os.sep)):
                return False
            return self.glob.matches(os.path.relpath(path, self.base).replace(os.sep, "/"))
        if rel is not None and self.glob.matches(rel):
            return True
        return self.glob.matches(path.replace(os.sep, "/"))


class Watchers:
    """One server's file watchers: its registrations, or its extensions when it has none."""

    def __init__(self, root: str, extensions: Iterable[str]) -> None:
        self.root = root
        self.extensions = frozenset(e.lower() for e in extensions)
        self._by_id: dict[str, list[Watcher]] = {}

    @property
    def registered(self) -> bool:
        return bool(self._by_id)

    def register(self, registration_id: str, options: Any) -> None:
        """Take a ``workspace/didChangeWatchedFiles`` registration (its ``registerOptions``,
        as lsprotocol or plain JSON gives it)."""
        watchers = []
        for item in _field(options, "watchers") or ():
            pattern = _field(item, "glob_pattern", "globPattern")
            kinds = _field(item, "kind") or ALL_KINDS
            base: str | None = None
            if not isinstance(pattern, str):  # a RelativePattern: {baseUri, pattern}
                base_uri = _field(pattern, "base_uri", "baseUri")
                if not isinstance(base_uri, str):  # a WorkspaceFolder
                    base_uri = _field(base_uri, "uri")
                base = to_fs_path(base_uri) if isinstance(base_uri, str) else None
                pattern = _field(pattern, "pattern")
                if base is None or not isinstance(pattern, str):
                    continue
                base = os.path.realpath(base)
            try:
                glob = compile_glob(pattern.lstrip("/") if base else pattern,
                                    by_name="/" not in pattern)
            except GlobError:
                log.debug("language server watcher pattern %r is not usable", pattern)
                continue
            watchers.append(Watcher(glob, int(kinds), base))
        self._by_id[registration_id] = watchers

    def unregister(self, registration_id: str) -> None:
        self._by_id.pop(registration_id, None)

    def wants(self, path: str, kind: str) -> bool:
        """Whether the server is to be told that ``path`` was ``kind`` (created, changed,
        deleted)."""
        if not self._by_id:
            return os.path.splitext(path)[1].lower() in self.extensions
        bit = EVENT_TYPES[kind][1]
        rel = None
        if path.startswith(self.root.rstrip(os.sep) + os.sep):
            rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        return any(w.kinds & bit and w.matches(path, rel)
                   for watchers in self._by_id.values() for w in watchers)


def _field(value: Any, *names: str) -> Any:
    for name in names:
        if isinstance(value, Mapping):
            if name in value:
                return value[name]
        elif hasattr(value, name):
            return getattr(value, name)
    return None
