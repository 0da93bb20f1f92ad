"""callgate: a tool host for AI coding agents.

Every tool call goes through one pipeline: resolve, validate, pre-tool-use
hooks, permission, host gates, dispatch, result shaping. Tools are plugins
(pluggy, entry-point group ``callgate``); this package is the public API that
plugins and integrators use. Anything not listed in ``__all__`` is private.

Writing a tool::

    from callgate import hookimpl, ToolSpec

    @hookimpl
    def callgate_register_tools(registry):
        registry.add(ToolSpec(name="word_count", description="...", read_only=True,
                              schema={"type": "object", "properties": {...}},
                              execute=run_word_count))

and expose the module in your package's ``pyproject.toml``::

    [project.entry-points.callgate]
    word_count = "my_package.plugin"
"""

import logging as _logging

from ._atomic import create_file, replace_file, sweep_stale_temps, temp_name
from ._context import GatedPath, ToolContext
from ._errors import BootError, ConfigError, ToolError
from ._gate import check_paths, not_found, not_observed, removed_after_read, stale
from ._host import Host, PluginInfo
from ._lease import WriterLease
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
from ._notices import NoticeQueue
from ._observations import (
    Absent,
    ObservationLedger,
    Present,
    identity_of,
    matches,
    needs_digest,
    version_of,
)
from ._results import ResultStore, page_text
from ._schema import canonical_bytes, canonical_schema, fingerprint, short_fingerprint
from ._session import Session
from ._spec import Target, ToolSpec
from ._workspace import ResolvedPath, Workspace, within
from .hookspecs import hookimpl, hookspec

_logging.getLogger("callgate").addHandler(_logging.NullHandler())

__version__ = "0.1.0"

__all__ = [
    "ERROR_KINDS",
    "Absent",
    "BootError",
    "ConfigError",
    "Decision",
    "ErrorInfo",
    "GatedPath",
    "Host",
    "ImageBlock",
    "NoticeQueue",
    "ObservationLedger",
    "PathRole",
    "PermissionSubject",
    "PluginInfo",
    "Present",
    "Refuse",
    "Replace",
    "ResolvedPath",
    "ResultStore",
    "Session",
    "Target",
    "TextBlock",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "Violation",
    "Workspace",
    "WriterLease",
    "canonical_bytes",
    "canonical_schema",
    "check_paths",
    "create_file",
    "fingerprint",
    "hookimpl",
    "hookspec",
    "identity_of",
    "matches",
    "needs_digest",
    "not_found",
    "not_observed",
    "page_text",
    "removed_after_read",
    "replace_file",
    "short_fingerprint",
    "stale",
    "sweep_stale_temps",
    "temp_name",
    "version_of",
    "within",
]
