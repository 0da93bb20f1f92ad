"""The workspace's VCS change set, for ``review`` and ``security_review`` children.

``git status --porcelain`` and ``git diff HEAD`` (staged and unstaged), through the core's
door (`callgate.process`: the session's sandbox with the workspace read-only, no network, no
host secrets), in their own process group, killed on timeout, output capped. Not a git
repository (or no git): ``None``, and the child is told to find the change set itself.

Git is data here, never configuration (`hardened_git`): the workspace and its ``.git``
are the attacker's, so the repository is located by this module (git's discovery would
follow a ``commondir`` or a bare repository the model planted), git runs with no system or
global config, no hook, pager, fsmonitor, external diff, textconv, submodule recursion or
transport, and every filter or diff driver the repository's config defines is blanked
before the diff is read.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from callgate import process

TIMEOUT_S = 10.0
MAX_CHARS = 60_000
#: options on every git command line (the env's GIT_CONFIG_* overrides do the rest)
GIT_OPTIONS = ("--no-pager", "--no-optional-locks", "--no-replace-objects",
               "--literal-pathspecs")
#: config that would run a program, recurse or reach the network, switched off
OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.attributesFile", os.devnull),
    ("core.untrackedCache", "false"),
    ("core.sshCommand", "false"),
    ("core.alternateRefsCommand", ""),
    ("diff.external", ""),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),
    ("safe.bareRepository", "explicit"),
)
#: driver keys (``filter.<name>.clean``...) that name a program: each one found is blanked
DRIVER_KEYS = r"^(filter\..*\.(clean|smudge|process)|diff\..*\.(textconv|command))$"
#: the diff options that keep drivers and external programs out
DIFF_OPTIONS = ("--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all")


def _repository(root: str) -> tuple[str, str, str] | None:
    """``(git_dir, common_dir, work_tree)`` of the repository holding ``root``, found as git
    would, except that a bare repository is never discovered and a ``commondir`` is followed
    only in a linked worktree's standard layout (``<common>/worktrees/<name>``)."""
    directory = os.path.realpath(root)
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.isdir(dot_git):
            return dot_git, dot_git, directory
        if os.path.isfile(dot_git):
            git_dir = _gitdir_file(dot_git)
            if git_dir is None:
                return None
            return git_dir, _common_dir(git_dir), directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _gitdir_file(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    target = os.path.join(os.path.dirname(path), text[len("gitdir:"):].strip())
    target = os.path.realpath(target)
    return target if os.path.isdir(target) else None


def _common_dir(git_dir: str) -> str:
    holder = os.path.dirname(git_dir)
    if os.path.basename(holder) == "worktrees" and os.path.isfile(
            os.path.join(git_dir, "commondir")):
        return os.path.dirname(holder)  # where commondir points in git's own layout
    return git_dir


def hardened_git(session: Any, root: str, blank: tuple[str, ...] = ()
                 ) -> tuple[list[str], dict[str, str], str] | None:
    """``(argv prefix, environment, cwd)`` for running git on the repository holding
    ``root`` with its configuration reduced to data, or ``None`` (no repository, no git);
    the environment is what is set on top of the door's minimal one (`_git`).

    The repository is pinned (``GIT_DIR``, ``GIT_COMMON_DIR``, ``GIT_WORK_TREE``); the
    host's own ``GIT_*`` variables are dropped; system and global config are not read;
    `OVERRIDES` and each key in ``blank`` (set to empty) are given as command-line config
    through ``GIT_CONFIG_COUNT``/``KEY``/``VALUE``, so a key or value is never parsed
    out of one string."""
    git = process.which("git", session)
    found = _repository(root)
    if git is None or found is None:
        return None
    git_dir, common_dir, work_tree = found
    env: dict[str, str] = {}  # on the door's minimal environment: no host GIT_* reaches git
    env.update({
        "GIT_DIR": git_dir, "GIT_COMMON_DIR": common_dir, "GIT_WORK_TREE": work_tree,
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_SYSTEM": os.devnull,
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_LAZY_FETCH": "1",
        "GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C",
    })
    config = [*OVERRIDES, ("safe.directory", work_tree)]
    config += [(key, "") for key in blank]
    config += [(key.rsplit(".", 1)[0] + ".required", "false") for key in blank
               if key.startswith("filter.")]
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for i, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return [git, *GIT_OPTIONS], env, work_tree


def _git(session: Any, launch: tuple[list[str], dict[str, str], str], *args: str
         ) -> str | None:
    argv, env, cwd = launch
    try:
        done = process.prepare(
            session, [*argv, *args], workspace="read", cwd=cwd, purpose="git",
            env=process.Environment(inherit="minimal", set=env)).run(timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")
def _drivers(session: Any, root: str) -> tuple[str, ...] | None:
    """The filter and diff driver keys the repository's config defines (``None``: no
    repository). Reading config runs nothing."""
    launch = hardened_git(session, root)
    if launch is None:
        return None
    out = _git(session, launch, "config", "--null", "--name-only", "--get-regexp",
               DRIVER_KEYS)
    return tuple(k for k in (out or "").split("\0") if k)


def change_set(session: Any, max_chars: int = MAX_CHARS) -> str | None:
    """The change set of ``session``'s workspace as prompt text, or ``None`` outside a git
    work tree."""
    root = str(session.workspace.root)
    drivers = _drivers(session, root)
    launch = hardened_git(session, root, drivers) if drivers is not None else None
    if launch is None:
        return None
    status = _git(session, launch, "status", "--porcelain=v1", "--untracked-files=all",
                  "--ignore-submodules=all")
    if status is None:
        return None
    diff = _git(session, launch, "diff", *DIFF_OPTIONS, "HEAD")
    if diff is None:  # no HEAD yet: what is staged
        diff = _git(session, launch, "diff", *DIFF_OPTIONS, "--cached") or ""
    if not status.strip() and not diff.strip():
        return "git status: the work tree is clean (no changes to review)."
    text = f"git status --porcelain:\n{status.rstrip()}\n\ngit diff HEAD:\n{diff.rstrip()}"
    if len(text) > max_chars:
        text = text[:max_chars] + (
            f"\n…[change set truncated at {max_chars} characters; "
            "run git diff with paths for the rest]"
        )
    return text
