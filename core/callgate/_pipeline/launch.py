"""What a session asks the spawn door to start (`Launch`), and what a sandbox answers
(`Confined`): the values the ``callgate_confine_process`` hook trades (`callgate.process`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import attrs

if TYPE_CHECKING:
    from .._model.values import ToolCall

#: How a program may use the workspace: ``"read"`` (shown read-only: a language server,
#: grep's ``rg``, review's ``git``) or ``"write"`` (a shell command in a writing session).
Access = Literal["read", "write"]
#: ``note(output, exit_code)``: one line explaining a failure the sandbox caused, or None.
NoteFn = Callable[[str, "int | None"], "str | None"]


@attrs.frozen(kw_only=True)
class Launch:
    """One program as a session asks to start it (what the ``callgate_confine_process`` hook
    sees): argv (``argv[0]`` resolved), environment and working directory, the workspace
    access and network it needs, what it is for (``purpose``: ``"bash"``, ``"lsp:python"``,
    ``"grep"``, ``"mcp:<server>"``...) and the tool call that starts it, if any."""

    argv: tuple[str, ...] = attrs.field(converter=tuple)
    env: Mapping[str, str]
    cwd: str
    workspace: Access = "read"
    network: bool = False
    purpose: str = ""
    call: ToolCall | None = None


@attrs.frozen(kw_only=True)
class Confined:
    """A sandbox's answer to `Launch`: what to start instead, and an optional ``note``
    (one line naming what the sandbox refused, for a failed shell command's output)."""

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: str
    note: NoteFn | None = None


__all__ = ["Access", "Confined", "Launch", "NoteFn"]
