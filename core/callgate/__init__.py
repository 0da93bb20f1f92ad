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

from ._atomic import (
    PRUNE,
    copy_noreplace,
    create_file,
    make_parents,
    pid_alive,
    remove_empty_dirs,
    rename_noreplace,
    replace_file,
    sweep_stale_temps,
    sweep_tree,
    temp_basename,
    temp_name,
)
from ._changes import ChangeDiff, FilePreview, change_diff
from ._charset import declaration as coding_declaration
from ._charset import usable_codec
from ._confine import READ_FLAGS, HeldDir, PathChanged, open_dir, walk_dirs
from ._confine import mechanism as confinement_mechanism
from ._context import GatedPath, ToolContext
from ._errors import BootError, ConfigError, ToolError
from ._files_api import (
    DEFAULT_MAX_EDIT_BYTES,
    DENIED_NAMES,
    FileAccess,
    ReadDenylist,
    SourceFile,
    binary_error,
    denied_name,
    too_large,
)
from ._gate import (
    changed_while_applying,
    check_paths,
    io_error,
    is_directory,
    kind_of,
    not_found,
    not_observed,
    not_regular,
    removed_after_read,
    stale,
    stale_detail,
)
from ._host import Host, PluginInfo
from ._lease import WriterLease, held_paths
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
from ._protected import check_write as check_protected
from ._protected import protected_paths
from ._results import ResultStore, page_text
from ._schema import canonical_bytes, canonical_schema, fingerprint, short_fingerprint
from ._serial import call_from_json, result_to_json
from ._session import Session
from ._spec import Target, ToolSpec
from ._state import state_dir
from ._textio import (
    DETECT_BYTES,
    ENCODINGS,
    Declaration,
    DecodedText,
    Detection,
    bom_of,
    codec_of,
    declared_kind,
    decode_bytes,
    decode_text,
    detect,
    detect_encoding,
    display,
    display_line,
    display_lines,
    encode_text,
    has_escapes,
    is_binary,
    line_style,
    newline_bytes,
    split_lines,
    to_crlf,
    unencodable,
    unit_of,
)
from ._workspace import ResolvedPath, Workspace, root_path, within
from .hookspecs import hookimpl, hookspec

_logging.getLogger("callgate").addHandler(_logging.NullHandler())

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_EDIT_BYTES",
    "DENIED_NAMES",
    "DETECT_BYTES",
    "ENCODINGS",
    "ERROR_KINDS",
    "PRUNE",
    "READ_FLAGS",
    "Absent",
    "BootError",
    "ChangeDiff",
    "ConfigError",
    "Decision",
    "Declaration",
    "DecodedText",
    "Detection",
    "ErrorInfo",
    "FileAccess",
    "FilePreview",
    "GatedPath",
    "HeldDir",
    "Host",
    "ImageBlock",
    "NoticeQueue",
    "ObservationLedger",
    "PathChanged",
    "PathRole",
    "PermissionSubject",
    "PluginInfo",
    "Present",
    "ReadDenylist",
    "Refuse",
    "Replace",
    "ResolvedPath",
    "ResultStore",
    "Session",
    "SourceFile",
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
    "binary_error",
    "bom_of",
    "call_from_json",
    "canonical_bytes",
    "canonical_schema",
    "change_diff",
    "changed_while_applying",
    "check_paths",
    "check_protected",
    "codec_of",
    "coding_declaration",
    "confinement_mechanism",
    "copy_noreplace",
    "create_file",
    "declared_kind",
    "decode_bytes",
    "decode_text",
    "denied_name",
    "detect",
    "detect_encoding",
    "display",
    "display_line",
    "display_lines",
    "encode_text",
    "fingerprint",
    "has_escapes",
    "held_paths",
    "hookimpl",
    "hookspec",
    "identity_of",
    "io_error",
    "is_binary",
    "is_directory",
    "kind_of",
    "line_style",
    "make_parents",
    "matches",
    "needs_digest",
    "newline_bytes",
    "not_found",
    "not_observed",
    "not_regular",
    "open_dir",
    "page_text",
    "pid_alive",
    "protected_paths",
    "remove_empty_dirs",
    "removed_after_read",
    "rename_noreplace",
    "replace_file",
    "result_to_json",
    "root_path",
    "short_fingerprint",
    "split_lines",
    "stale",
    "stale_detail",
    "state_dir",
    "sweep_stale_temps",
    "sweep_tree",
    "temp_basename",
    "temp_name",
    "to_crlf",
    "too_large",
    "unencodable",
    "unit_of",
    "usable_codec",
    "version_of",
    "walk_dirs",
    "within",
]
