"""callgate-lsp: language-server tools for the model, and diagnostics after every edit.

Four read-only tools, hidden by default (reached through ``use_capability``):
``lsp_definition``, ``lsp_references`` and ``lsp_hover`` take ``file``,
``line`` (1-based) and ``symbol`` (its text on that line); ``lsp_diagnostics``
takes ``file``. Each session starts one server per language on first use
(from the default table or ``[lsp.servers.<lang>]``), keeps it on a private
event-loop thread, restarts it with a note after a crash, and stops it with
the session (``shutdown``, ``exit``, then a kill of its process group). No
server is downloaded: a missing binary is an error with its install hint.
Servers start through the core's door (`callgate.process`): in the sandbox with the
workspace read-only where one works, without host secrets, with program paths pinned
to the user's installs (tsserver, basedpyright's interpreter), and refused where no
sandbox works if their program runs the project's code (`_guards`).

With ``[lsp] diagnostics_after_edit = true``, the result of any tool that
declares ``mutates_paths`` gains a ``New diagnostics:`` section listing what
the change introduced (see ``_after_edit``).

Entry point (``pyproject.toml``): ``[project.entry-points.callgate] lsp = "callgate_lsp"``.
"""

from typing import Any

from ._table import DEFAULTS, ServerSpec, ServerTable
from .config import CONFIG_SCHEMA
from .plugin import (
    callgate_pre_tool_use,
    callgate_register_tools,
    callgate_session_end,
    callgate_shape_result,
)
from .tools.lsp import EXTENSION as LSP


def __getattr__(name: str) -> Any:
    if name == "LspManager":  # imports the client stack: only when asked for
        from ._manager import LspManager

        return LspManager
    raise AttributeError(name)


__all__ = [
    "CONFIG_SCHEMA",
    "DEFAULTS",
    "LSP",
    "LspManager",
    "ServerSpec",
    "ServerTable",
    "callgate_pre_tool_use",
    "callgate_register_tools",
    "callgate_session_end",
    "callgate_shape_result",
]
