"""`FileScope`: one session's files, as the host gate (`_files.gate`) and the file API
(`_files.access`) see them: its workspace, its observation ledger and the host's
``[files]`` policy. They take a scope, never the session.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .._fs.observations import ObservationLedger
from .._fs.workspace import ResolvedPath, Workspace
from .._text.textio import Declaration
from .declared import declaration, declared_in
from .policy import FilesPolicy, ReadDenylist
from .protected import Protection, check_write, find_hooks_dirs, protected_paths


class FileScope:
    """One session's files. ``git_hooks_path(root)`` asks git for a repository's
    ``core.hooksPath`` (the session supplies it: through the spawn door)."""

    __slots__ = ("_denylist", "_hooks", "git_hooks_path", "ledger", "policy", "workspace")

    def __init__(
        self,
        workspace: Workspace,
        ledger: ObservationLedger,
        policy: FilesPolicy | None = None,
        git_hooks_path: Callable[[str], str | None] | None = None,
    ) -> None:
        self.workspace = workspace
        self.ledger = ledger
        self.policy = policy if policy is not None else FilesPolicy()
        self.git_hooks_path = git_hooks_path
        self._hooks: tuple[str, ...] | None = None
        self._denylist: ReadDenylist | None = None

    @property
    def protection(self) -> Protection:
        return self.policy.protection

    @property
    def denylist(self) -> ReadDenylist | None:
        """The read deny list when ``[files] read_denylist`` is on, else ``None``."""
        if not self.policy.read_denylist:
            return None
        if self._denylist is None:
            self._denylist = ReadDenylist()
        return self._denylist

    def denied(self, path: str | os.PathLike[str]) -> bool:
        """Whether the read deny list (when on) hides ``path`` (see `ReadDenylist.denies`)."""
        denylist = self.denylist
        return denylist is not None and denylist.denies(path)

    def declared(self, path: str, chosen: str | None = None) -> Declaration | None:
        """What is declared about canonical ``path``'s encoding: its ``[files] encodings``
        entry, else ``chosen`` (the encoding the model settled for the version being
        decoded), with the user's ``[files] fallback_encodings`` (`declaration`)."""
        rules = self.policy.encodings
        found = declared_in(rules, path, self.workspace.root) if rules else None
        return declaration(found, chosen, self.policy.fallback_encodings)

    def hooks_dirs(self) -> tuple[str, ...]:
        """Git's ``core.hooksPath`` when it points into a write root (asked once)."""
        if self._hooks is None:
            self._hooks = find_hooks_dirs(self.workspace, self.git_hooks_path)
        return self._hooks

    def check_write(self, resolved: ResolvedPath) -> None:
        """Refuse a write to a protected path (``FS_PROTECTED``, `_files.protected`)."""
        check_write(self, resolved)

    def protected_paths(self) -> list[str]:
        """The protected paths that exist in the write roots (for a sandbox)."""
        return protected_paths(self)


__all__ = ["FileScope"]
