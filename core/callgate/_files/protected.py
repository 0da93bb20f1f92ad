"""Protected paths: what no write tool may change and the sandbox shows read-only.

A model that could rewrite the host's own configuration would undo every rule
at the next session (the sandbox off, the deny rules gone, an ``auto_start``
MCP server that runs anything), and one that could write git's hooks or config
would run code unconfined at the user's next ``git`` command. So, in every
write root of a session:

- every config file this host loaded (user, explicit or workspace config), and
  the user config file even before it exists;
- ``callgate.toml`` at the workspace root (where the next session looks for a
  workspace config, whether or not one exists now), and in every directory the
  user config trusts (``[trust] workspaces``: a session started there would
  apply it in full);
- ``.callgate/`` (callgate's own state);
- every file git reads as configuration or as a redirection of it (at any depth,
  submodules' ``.git/modules/*/`` and linked worktrees' ``.git/worktrees/*/``
  included): ``hooks/``, ``config*``, ``info/`` (attributes pick filter and diff
  drivers), ``commondir`` (where config, hooks and objects are read),
  ``worktrees/`` (each a commondir, a gitdir and a worktree config),
  ``objects/info/*alternates`` (other object stores), a ``.git`` entry itself (a
  ``gitdir:`` file names another repository) and any ``HEAD`` file (beside
  ``objects/``, ``refs/`` and ``config`` it makes its directory a repository git
  discovers); and the directory git's ``core.hooksPath`` names;
- every path ``[files] protected`` names (globs as in permission rules), and every path a
  plugin protects (`Registry.protect`: the settings files another agent reads);

minus what ``[files] allow_protected`` exempts (a key only the user config, an
explicit config or a trusted workspace config can set). The host gate refuses
a structured mutation of a protected path before anything is touched
(`check_write`, called for every path a tool declares in ``mutates_paths`` or
``mutated_paths``, both ends of a move included, and by ``ctx.files`` writes); the
sandbox mounts the existing ones read-only (`protected_paths`).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from .._fs.workspace import ResolvedPath, within
from .._model.errors import ToolError
from .._permissions.rules import compile_spec

if TYPE_CHECKING:
    from .._fs.workspace import Workspace


class Scope(Protocol):
    """What protection reads of a session's files (`_files.scope.FileScope`)."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def protection(self) -> Protection: ...

    def hooks_dirs(self) -> tuple[str, ...]: ...


SIGNATURE = "FS_PROTECTED"
WORKSPACE_CONFIG = "callgate.toml"
#: ``(pattern relative to a write root, why it is protected)``; globs as in path rules
_HOOKS = "git runs its hooks outside any sandbox"
_CONFIG = "git reads hooks, filters and commands from it"
_INFO = "git reads attributes from it, which pick the filters and diff drivers it runs"
_COMMONDIR = "it tells git where to read its config and hooks from"
_ALTERNATES = "it tells git to read objects from another store"
#: the git directories a repository holds: its own and its submodules' (a linked worktree's
#: entry under .git/worktrees/ is protected whole)
_GIT_DIRS = ("**/.git", "**/.git/modules/**")
BUILT_IN: tuple[tuple[str, str], ...] = (
    (".callgate/**", "it holds callgate's own state"),
    ("**/.git", "a .git file (gitdir:) tells git which repository to use"),
    (
        "**/HEAD",
        "a HEAD file beside objects/ and refs/ makes its directory a repository "
        "whose config git reads",
    ),
    *(
        (f"{d}/{rel}", why)
        for d in _GIT_DIRS
        for rel, why in (
            ("hooks/**", _HOOKS),
            ("config*", _CONFIG),
            ("info/**", _INFO),
            ("commondir", _COMMONDIR),
            ("gitdir", "it tells git where this worktree's repository is"),
            ("objects/info/*alternates", _ALTERNATES),
        )
    ),
    ("**/.git/worktrees/**", "each linked worktree's entry redirects git's config"),
)
#: concrete paths (relative to a write root) the sandbox mounts read-only when they exist
#: (a .git *file* too: a directory stays writable, git writes its own data there)
SANDBOX_PATHS = (
    WORKSPACE_CONFIG,
    ".callgate",
    ".git/hooks",
    ".git/config",
    ".git/config.worktree",
    ".git/info",
    ".git/commondir",
    ".git/objects/info/alternates",
    ".git/objects/info/http-alternates",
)
SANDBOX_GLOBS = (
    ".git/modules/*/hooks",
    ".git/modules/*/config",
    ".git/modules/*/config.worktree",
    ".git/modules/*/info",
    ".git/modules/*/commondir",
    ".git/modules/*/objects/info/alternates",
    ".git/worktrees/*/commondir",
    ".git/worktrees/*/gitdir",
    ".git/worktrees/*/config.worktree",
)
MAX_EXPANDED = 256  # paths a [files] protected glob expands to for the sandbox, at most
GIT_TIMEOUT_S = 5.0

Matcher = Callable[[str], bool]


@attrs.frozen
class _Rule:
    matcher: Matcher
    why: str
    pattern: str


@attrs.frozen
class Protection:
    """One host's protected paths, compiled once."""

    config_files: tuple[str, ...]
    rules: tuple[_Rule, ...]
    exempt: tuple[Matcher, ...]
    extra_patterns: tuple[str, ...]
    exempt_patterns: tuple[str, ...]
    #: whether the user config trusts a directory (its callgate.toml applies in full)
    trusts: Callable[[str], bool] | None = None


def _compile(pattern: str) -> Matcher:
    return compile_spec("path", pattern)


def protection_of(
    table: Mapping[str, Any], source: Any, claimed: Sequence[tuple[str, str]] = ()
) -> Protection:
    """The compiled protection of a host: the config files ``source`` loaded (a
    `LayeredSource`, or ``None``), ``[files] protected`` / ``allow_protected``, and the
    ``(pattern, why)`` paths plugins protect (``claimed``: `Registry.protect`)."""
    extra = tuple(p for p in table.get("protected", ()) if isinstance(p, str) and p)
    exempt = tuple(p for p in table.get("allow_protected", ()) if isinstance(p, str) and p)
    files = list(getattr(source, "files", ()))
    if getattr(source, "user_file", None):  # the next boot reads it, existing or not
        files.append(source.user_file)
    loaded = tuple(dict.fromkeys(os.path.realpath(f) for f in files))
    rules = [
        _Rule(
            _compile(WORKSPACE_CONFIG),
            "it is where callgate reads this workspace's config",
            WORKSPACE_CONFIG,
        )
    ]
    rules += [_Rule(_compile(p), why, p) for p, why in BUILT_IN]
    rules += [_Rule(_compile(p), "[files] protected lists it", p) for p in extra]
    # a plugin's (`Registry.protect`): the settings files another agent reads
    rules += [_Rule(_compile(p), why, p) for p, why in claimed]
    trusts = getattr(source, "trusts", None)
    return Protection(
        loaded,
        tuple(rules),
        tuple(_compile(p) for p in exempt),
        extra + tuple(p for p, _why in claimed),
        exempt,
        trusts,
    )


def _forms(path: str, root: str) -> tuple[str, ...]:
    """The forms a path rule sees: relative to ``root`` with ``/`` (when inside), absolute."""
    absolute = path.replace(os.sep, "/")
    if path == root:
        return (".", absolute)
    if not within(path, root):
        return (absolute,)
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    return (rel, absolute)


def _reason(scope: Scope, path: str) -> str | None:
    """Why ``path`` (absolute and clean) is protected in this session, or ``None``."""
    prot = scope.protection
    roots = scope.workspace.write_roots
    forms = [form for root in roots for form in _forms(path, root)] or [path]
    if any(m(f) for m in prot.exempt for f in forms):
        return None
    if path in prot.config_files:
        return "it is a config file this host reads"
    for rule in prot.rules:
        if rule.pattern == WORKSPACE_CONFIG:
            if path == os.path.join(scope.workspace.root, WORKSPACE_CONFIG):
                return rule.why
            if (
                os.path.basename(path) == WORKSPACE_CONFIG
                and prot.trusts is not None
                and prot.trusts(os.path.dirname(path))
            ):
                return (
                    "the user config trusts this directory, so a session started here "
                    "would apply it in full"
                )
            continue
        if any(rule.matcher(f) for f in forms):
            return rule.why
    for hooks in scope.hooks_dirs():
        if within(path, hooks):
            return "git runs the hooks in it (core.hooksPath) outside any sandbox"
    return None


def reason_for(scope: Scope, resolved: ResolvedPath) -> str | None:
    """Why a write to ``resolved`` is refused, or ``None``: judged on the path as written,
    on its entry (parents resolved, a final symlink not followed) and on its target."""
    entry = scope.workspace.entry_path(resolved)
    for form in dict.fromkeys((resolved.lexical, entry, resolved.path)):
        why = _reason(scope, form)
        if why is not None:
            return why
    return None


def check_write(scope: Scope, resolved: ResolvedPath) -> None:
    """Raise the ``blocked`` `ToolError` ``FS_PROTECTED`` when ``resolved`` is protected."""
    why = reason_for(scope, resolved)
    if why is None:
        return
    raise ToolError(
        "blocked",
        f"{SIGNATURE}: {resolved.display} is protected ({why}); write "
        "tools may not change it and nothing was written. If the user wants it "
        "changed, they can do it themselves or allow it with [files] "
        "allow_protected in their user config",
        SIGNATURE,
        {"executed": False, "path": resolved.display},
    )


def protected_paths(scope: Scope) -> list[str]:
    """The protected paths that exist in the session's write roots, canonical and sorted:
    what a sandbox mounts read-only (its ``[files] protected`` globs expanded, at most
    `MAX_EXPANDED` paths per pattern)."""
    prot = scope.protection
    roots = scope.workspace.write_roots
    wanted: list[str] = [f for f in prot.config_files if any(within(f, r) for r in roots)]
    for root in roots:
        wanted += [os.path.join(root, rel) for rel in SANDBOX_PATHS]
        dot_git = os.path.join(root, ".git")
        if os.path.isfile(dot_git) and not os.path.islink(dot_git):
            wanted.append(dot_git)  # a gitdir file
        for pattern in SANDBOX_GLOBS:
            wanted += _expand(root, pattern)
        for pattern in prot.extra_patterns:
            wanted += _expand(root, pattern)
    wanted += list(scope.hooks_dirs())
    out: set[str] = set()
    for path in wanted:
        if not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        if not any(within(real, r) for r in roots) or real in roots:
            continue
        if not any(m(f) for m in prot.exempt for root in roots for f in _forms(real, root)):
            out.add(real)
    return sorted(out)


def _expand(root: str, pattern: str) -> list[str]:
    if os.path.isabs(pattern):
        if not within(os.path.normpath(pattern), root):
            return []
        full = os.path.normpath(pattern)
    else:
        full = os.path.join(root, pattern)
    if not glob.has_magic(full):
        return [full]
    found: list[str] = []
    for path in glob.iglob(full, recursive=True, include_hidden=True):
        found.append(path.rstrip(os.sep))
        if len(found) >= MAX_EXPANDED:
            break
    return found


def find_hooks_dirs(
    workspace: Workspace, git_hooks_path: Callable[[str], str | None] | None
) -> tuple[str, ...]:
    """Git's ``core.hooksPath`` when it points into a write root (``git_hooks_path(root)``
    asks git, through the door the session supplies)."""
    root = workspace.root
    if git_hooks_path is None or not os.path.lexists(os.path.join(root, ".git")):
        return ()
    value = git_hooks_path(root)
    if not value:
        return ()
    path = os.path.realpath(os.path.join(root, os.path.expanduser(value)))
    if any(within(path, r) for r in workspace.write_roots) and path not in workspace.write_roots:
        return (path,)
    return ()


__all__ = [
    "SIGNATURE",
    "Protection",
    "Scope",
    "check_write",
    "find_hooks_dirs",
    "protected_paths",
    "protection_of",
    "reason_for",
]
