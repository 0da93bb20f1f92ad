"""callgate: a tool host for AI coding agents.

Every tool call goes through one pipeline: resolve, validate, pre-tool-use
hooks, permission, host gates, dispatch, result shaping. Tools are plugins
(pluggy, entry-point group ``callgate``); this package is the public API that
plugins and integrators use. Anything not listed in ``__all__`` here or in a
public submodule is private.

Writing a tool::

    from callgate import Registry, ToolContext, ToolSpec, hookimpl

    def run_word_count(ctx: ToolContext, args: dict) -> str:
        return str(len(ctx.files.read_text(args["path"]).split()))

    @hookimpl
    def callgate_register_tools(registry: Registry) -> None:
        registry.add(ToolSpec(name="word_count", description="...", read_only=True,
                              schema={"type": "object", "properties": {...}},
                              execute=run_word_count))

and expose the module in your package's ``pyproject.toml``::

    [project.entry-points.callgate]
    word_count = "my_package.plugin"

Public submodules: `callgate.files` (observed reads, atomic writes, the gate's
errors), `callgate.text` (encodings and line endings), `callgate.paths`
(confinement, walking with ignore rules, globs), `callgate.schema` (canonical
schemas), `callgate.store` (the session store: its interface, records and read API),
`callgate.rules` (permission rules you can test: rule sets, per-command verdicts,
explain), `callgate.hookspecs`, `callgate.sync` (the blocking facade) and `callgate.testing`
(the pytest fixtures), `callgate.permissions` (subject kinds plugins supply to the rule
engine). `state_dir()` is where plugins keep state that
outlives a session (``$CALLGATE_HOME``, else the platform's user state directory).
"""

import logging as _logging
from typing import Any as _Any

from ._context import ToolContext
from ._errors import BootError, ConfigError, ToolError
from ._facts import ExecutionFact
from ._host import Host, PluginInfo
from ._model import (
    ERROR_KINDS,
    Decision,
    ErrorInfo,
    ImageBlock,
    PathRole,
    PermissionSubject,
    Refuse,
    Replace,
    TextBlock,
    ToolCall,
    ToolResult,
    Violation,
)
from ._pair import SessionPair
from ._profiles import ChildProfile
from ._registry import Registry
from ._session import Session
from ._shared import SharedResources
from ._spec import ProxyRoute, Target, ToolSpec
from ._state import state_dir
from .hookspecs import hookimpl, hookspec

_logging.getLogger("callgate").addHandler(_logging.NullHandler())

__version__ = "0.1.0"

__all__ = [
    "ERROR_KINDS",
    "BootError",
    "ChildProfile",
    "ConfigError",
    "Decision",
    "ErrorInfo",
    "ExecutionFact",
    "Host",
    "ImageBlock",
    "PathRole",
    "PermissionSubject",
    "PluginInfo",
    "ProxyRoute",
    "Refuse",
    "Registry",
    "Replace",
    "Session",
    "SessionPair",
    "SharedResources",
    "Target",
    "TextBlock",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "Violation",
    "hookimpl",
    "hookspec",
    "state_dir",
]

#: Names this package exported before its API was made small, and where they live now.
_MOVED = {
    **dict.fromkeys(
        ("DEFAULT_MAX_EDIT_BYTES", "Absent", "FileAccess",
         "GatedPath", "ObservationLedger", "Present", "SourceFile", "WriterLease",
         "binary_error", "changed_while_applying", "copy_noreplace",
         "create_file", "held_paths", "identity_of", "io_error", "is_directory", "kind_of",
         "make_parents", "matches", "needs_digest", "not_found", "not_observed", "not_regular",
         "pid_alive", "remove_empty_dirs", "removed_after_read", "rename_noreplace",
         "replace_file", "stale", "stale_detail", "sweep_stale_temps", "sweep_tree",
         "temp_name", "too_large", "version_of", "temp_basename", "DENIED_NAMES",
         "ReadDenylist", "denied_name", "check_protected", "protected_paths"),
        "callgate.files"),
    **dict.fromkeys(
        ("DETECT_BYTES", "ENCODINGS", "Declaration", "DecodedText", "Detection", "bom_of",
         "codec_of", "coding_declaration", "declared_kind", "decode_bytes", "decode_text",
         "detect", "detect_encoding", "display", "display_line", "display_lines",
         "encode_text", "has_escapes", "is_binary", "line_style", "newline_bytes",
         "split_lines", "to_crlf", "unencodable", "unit_of", "usable_codec"), "callgate.text"),
    **dict.fromkeys(("PRUNE", "ResolvedPath", "Workspace", "within", "root_path", "READ_FLAGS",
                     "HeldDir", "PathChanged", "open_dir", "walk_dirs",
                     "confinement_mechanism"), "callgate.paths"),
    **dict.fromkeys(("canonical_bytes", "canonical_schema", "fingerprint",
                     "short_fingerprint"), "callgate.schema"),
}


class MovedError(ImportError):
    """A name that moved out of ``callgate`` into a public submodule (the message says where).

    An `ImportError` (not an `AttributeError`), so ``from callgate import <name>`` shows
    this message instead of Python's generic "cannot import name"."""


def __getattr__(name: str) -> _Any:
    home = _MOVED.get(name)
    if home is not None:
        raise MovedError(f"callgate.{name} is now {home}.{name}: import it from {home}")
    raise AttributeError(f"module 'callgate' has no attribute {name!r}")
