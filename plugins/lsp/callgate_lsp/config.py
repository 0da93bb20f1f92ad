"""The ``[lsp]`` table and its ``[lsp.servers.<language>]`` entries, with their defaults."""

from __future__ import annotations

from typing import Any

#: One ``[lsp.servers.<language>]``. ``x-workspace`` (callgate's config layering): only the user
#: (or a trusted config) defines or changes a server, whole (`CONFIG_SCHEMA`'s ``servers``);
#: each key says so too, with what it is.
SERVER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "command": {"type": "string", "minLength": 1, "x-workspace": "user",
                    "x-kind": "program"},
        "args": {"type": "array", "items": {"type": "string"}, "x-workspace": "user",
                 "x-kind": "program"},
        "env": {"type": "object", "additionalProperties": {"type": "string"},
                "x-workspace": "user", "x-kind": "env"},
        # which files (so which contents) go to which program
        "extensions": {"type": "array", "minItems": 1,
                       "items": {"type": "string", "pattern": r"^\.[^./\\\s]+$"},
                       "x-workspace": "user", "x-kind": "program"},
        "language_id": {"type": "string", "minLength": 1, "x-workspace": "user"},
        # shown to the model as the way to install the server: an instruction it may follow
        "install_hint": {"type": "string", "x-workspace": "user"},
        # sent to the server: they may name interpreters, plugins and paths it runs
        "initialization_options": {"x-workspace": "user", "x-kind": "program"},
        "settings": {"type": "object", "x-workspace": "user", "x-kind": "program"},
        "enabled": {"type": "boolean", "x-workspace": "user"},
        # "if_available": run it unconfined where no sandbox works, although its program
        # runs the project's code (docs/lsp.md); "required": never run it unconfined
        "sandbox": {"enum": ["required", "if_available"],
                    "x-workspace": ["if_available", "required"]},
    },
}



#: ``x-workspace`` (callgate's config layering): a workspace config the user config does not
#: trust may lower the limits, list fewer diagnostics and turn after-edit diagnostics off
#: (they start servers); it never defines or changes a server (`SERVER_SCHEMA`).
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "diagnostics_after_edit": {"type": "boolean", "default": False,
                                   "x-workspace": [True, False], "x-kind": "scope"},
        "after_edit_wait_ms": {"type": "integer", "minimum": 100, "maximum": 2000,
                               "default": 2000, "x-workspace": "min", "x-kind": "limit"},
        "after_edit_max_lines": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
                                 "x-workspace": "min", "x-kind": "limit"},
        "after_edit_min_severity": {"enum": ["error", "warning", "information", "hint"],
                                    "default": "warning",
                                    "x-workspace": ["hint", "information", "warning", "error"]},
        "diagnostics_wait_ms": {"type": "integer", "minimum": 0, "maximum": 10000,
                                "default": 2000, "x-workspace": "min", "x-kind": "limit"},
        # how long lsp_references waits for a server to load a small workspace (issue 35)
        "references_wait_ms": {"type": "integer", "minimum": 0, "maximum": 60000,
                               "default": 10000, "x-workspace": "min", "x-kind": "limit"},
        "initialize_timeout_s": {"type": "number", "minimum": 1, "maximum": 300, "default": 30,
                                 "x-workspace": "min", "x-kind": "limit"},
        "request_timeout_s": {"type": "number", "minimum": 1, "maximum": 300, "default": 30,
                              "x-workspace": "min", "x-kind": "limit"},
        "max_results": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100,
                        "x-workspace": "min", "x-kind": "limit"},
        "max_file_bytes": {"type": "integer", "minimum": 1024, "maximum": 67108864,
                           "default": 2097152, "x-workspace": "min", "x-kind": "limit"},
        # directories searched for servers after callgate's environment and PATH: never
        # from a workspace (a directory inside the workspace is dropped even here)
        "server_paths": {"type": "array", "items": {"type": "string", "minLength": 1},
                         "default": [], "x-workspace": "user", "x-kind": "path"},
        "servers": {"type": "object", "additionalProperties": SERVER_SCHEMA, "default": {},
                    "x-workspace": "user", "x-kind": "program"},
    },
}


def enabled(session: Any) -> bool:
    """``[lsp] diagnostics_after_edit`` (read on every call: keep it cheap)."""
    return bool(session.host.config("lsp").get("diagnostics_after_edit"))
