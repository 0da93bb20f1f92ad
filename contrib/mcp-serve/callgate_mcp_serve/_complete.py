"""``completion/complete`` (issue 34, item 6): what a client offers while the user types.

- A prompt's argument (the slash commands and skills have one, ``arguments``: the text
  after the command): the last word of what is typed so far is completed as a workspace
  path, through the session's confined view (never outside the workspace, the read deny
  list applied, dotfiles only when the word starts with a dot); each value is the whole
  argument with that word completed, directories ending in ``/``.
- The result resource template (``callgate://result/{ref}``): the refs of this session's
  stored results that start with what is typed.

Anything else completes to nothing (an empty list, as the spec allows). At most `MAX_VALUES`
values go out; ``total`` and ``hasMore`` say how many there were.
"""

from __future__ import annotations

import os
from typing import Any

import mcp_types as types
from callgate.host import Session

from . import _prompts, _resources

#: the spec's limit on the values of one answer
MAX_VALUES = 100
#: entries looked at in one directory before giving up counting
_SCAN_MAX = 5000


def _answer(values: list[str]) -> types.CompleteResult:
    return types.CompleteResult(completion=types.Completion(
        values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES))


def complete(session: Session, params: types.CompleteRequestParams) -> types.CompleteResult:
    """The completion for ``params`` (runs file I/O: call it from a worker thread)."""
    ref, argument = params.ref, params.argument
    if isinstance(ref, types.PromptReference) and argument.name == _prompts.ARGUMENT:
        return _answer(_paths(session, argument.value))
    if isinstance(ref, types.ResourceTemplateReference) and ref.uri == _resources.TEMPLATE \
            and argument.name == "ref":
        refs = sorted({item.ref for item in session.results.listing()
                       if item.ref.startswith(argument.value)})
        return _answer(refs)
    return _answer([])


def _paths(session: Session, typed: str) -> list[str]:
    """``typed`` with its last word completed as a workspace path, one value per match."""
    cut = max(typed.rfind(" "), typed.rfind("\t")) + 1
    lead, word = typed[:cut], typed[cut:]
    folder, _, prefix = word.rpartition("/")
    try:
        resolved = session.files.resolve_read(folder or ".")
        held = resolved.opendir()
    except Exception:  # outside the workspace, denied, missing, not a directory: nothing
        return []
    found: list[str] = []
    try:
        for entry in held.scandir()[:_SCAN_MAX]:
            name = entry.name
            if not name.startswith(prefix) or (name.startswith(".") and
                                               not prefix.startswith(".")):
                continue
            if session.files.denied(os.path.join(resolved.path, name)):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            path = f"{folder}/{name}" if folder else name
            found.append(f"{lead}{path}{'/' if is_dir else ''}")
    finally:
        held.close()
    return found


def empty(_params: Any = None) -> types.CompleteResult:
    return _answer([])


__all__ = ["MAX_VALUES", "complete", "empty"]
