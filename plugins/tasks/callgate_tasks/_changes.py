"""The workspace's VCS change set, for ``review`` and ``security_review`` children.

``git status --porcelain`` and ``git diff HEAD`` (staged and unstaged), run without
anything the repository's own config could make git run (no pager, no external diff,
no textconv, no fsmonitor, no hooks), through the core's door (`callgate.process`: the
session's sandbox with the workspace read-only, no network, no host secrets), in their own
process group, killed on timeout, output capped. Not a git repository (or no git):
``None``, and the child is told to find the change set itself.
"""

from __future__ import annotations

import subprocess
from typing import Any

from callgate import process

TIMEOUT_S = 10.0
MAX_CHARS = 60_000
SAFE = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "diff.external=",
    "-c",
    "core.hooksPath=/dev/null",
    "--no-pager",
)


def _git(session: Any, *args: str) -> str | None:
    git = process.which("git", session)
    if git is None:
        return None
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = process.prepare(session, [git, *SAFE, *args], workspace="read",
                               env=process.Environment(set=env), purpose="git").run(
            timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def change_set(session: Any, max_chars: int = MAX_CHARS) -> str | None:
    """The change set of ``session``'s workspace as prompt text, or ``None`` outside a git
    work tree."""
    status = _git(session, "status", "--porcelain=v1", "--untracked-files=all")
    if status is None:
        return None
    diff = _git(session, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "HEAD")
    if diff is None:  # no HEAD yet: what is staged
        diff = _git(session, "diff", "--no-ext-diff", "--no-textconv", "--no-color",
                    "--cached") or ""
    if not status.strip() and not diff.strip():
        return "git status: the work tree is clean (no changes to review)."
    text = f"git status --porcelain:\n{status.rstrip()}\n\ngit diff HEAD:\n{diff.rstrip()}"
    if len(text) > max_chars:
        text = text[:max_chars] + (
            f"\n…[change set truncated at {max_chars} characters; "
            "run git diff with paths for the rest]"
        )
    return text
