"""Names at the boundary: callgate's tools and arguments as Claude Code's hooks know them, and
back.

A hook written for Claude Code reads ``tool_name`` ``"Bash"`` and ``tool_input.file_path``;
callgate's tool is ``bash`` and its argument ``path``. `to_claude` gives a hook the shapes it
expects (tool name, argument keys, absolute file paths as Claude Code sends them) and
`from_claude` maps a hook's ``updatedInput`` back onto the call's arguments (the pipeline then
validates the result again, as it does any replacement). `tool_response` is what a
PostToolUse hook reads about the result, and `updated_output_text` turns a hook's
``updatedToolOutput`` back into the text the model reads, checking its shape first.

A callgate tool Claude Code has no name for keeps its own (``remember``, ``lsp_hover``); an
MCP tool reached through ``use_capability`` is ``mcp__<server>__<tool>`` in both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class ToolName:
    """One callgate tool as Claude Code names it: ``claude`` (its name), ``keys`` (callgate
    argument → Claude Code key), ``paths`` (callgate arguments holding a file path, sent
    absolute) and the ``response`` kind of its ``tool_response``."""

    claude: str
    keys: Mapping[str, str] = attrs.field(factory=dict)
    paths: tuple[str, ...] = ()
    response: str = "output"


#: callgate tool → how Claude Code names it (tool and arguments).
TOOLS: dict[str, ToolName] = {
    "bash": ToolName("Bash", {"timeout_ms": "timeout"}, response="bash"),
    "pwsh": ToolName("PowerShell", {"timeout_ms": "timeout"}, response="bash"),
    "read_file": ToolName("Read", {"path": "file_path"}, ("path",), "read"),
    "view_image": ToolName("Read", {"path": "file_path"}, ("path",), "read"),
    "write_file": ToolName("Write", {"path": "file_path"}, ("path",), "file"),
    "edit_file": ToolName("Edit", {"path": "file_path"}, ("path",), "file"),
    "multi_edit": ToolName("MultiEdit", {"path": "file_path"}, ("path",), "file"),
    "notebook_edit": ToolName("NotebookEdit", {"path": "notebook_path"}, ("path",), "file"),
    "glob": ToolName("Glob"),
    "grep": ToolName("Grep", {"case_insensitive": "-i", "context": "-C"}),
    "ls": ToolName("LS", {}, ("path",)),
    "web_fetch": ToolName("WebFetch"),
    "task": ToolName("Task"),
    "todo_write": ToolName("TodoWrite"),
    "job_output": ToolName("BashOutput", {"job_id": "bash_id"}),
    "job_kill": ToolName("KillShell", {"job_id": "shell_id"}),
    "ask": ToolName("AskUserQuestion"),
}
#: Claude Code's tool names callgate has a tool for (for matchers, rules and lint).
CLAUDE_NAMES: frozenset[str] = frozenset(t.claude for t in TOOLS.values())


def claude_name(tool: str) -> str:
    """The name a hook sees for callgate's (effective) tool ``tool``."""
    found = TOOLS.get(tool)
    return found.claude if found is not None else tool


def callgate_names(claude: str) -> list[str]:
    """The callgate tools Claude Code's ``claude`` names (``Read``: read_file, view_image)."""
    found = [name for name, t in TOOLS.items() if t.claude == claude]
    return found or [claude]


def _absolute(value: Any, root: str) -> Any:
    if not isinstance(value, str) or not value:
        return value
    return os.path.normpath(os.path.join(root, os.path.expanduser(value)))


def to_claude(tool: str, arguments: Any, root: str) -> tuple[str, Any]:
    """``(tool_name, tool_input)`` as a Claude Code hook reads them: keys renamed, file paths
    absolute (Claude Code sends them so), every other value as the model sent it."""
    found = TOOLS.get(tool)
    if found is None or not isinstance(arguments, Mapping):
        return claude_name(tool), arguments
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if key in found.paths:
            value = _absolute(value, root)
        out[found.keys.get(key, key)] = value
    return found.claude, out


def from_claude(tool: str, updated: Mapping[str, Any], arguments: Any,
                root: str) -> dict[str, Any]:
    """The call's arguments with a hook's ``updatedInput`` applied: each key it names
    (Claude Code's keys mapped back to callgate's) replaces or adds that argument, the
    others stay. A path the hook returned unchanged (the absolute form of the model's)
    keeps the model's spelling. Keys callgate's tool does not know stay as they are, for
    validation to refuse."""
    found = TOOLS.get(tool)
    out = dict(arguments) if isinstance(arguments, Mapping) else {}
    back = {v: k for k, v in found.keys.items()} if found is not None else {}
    for key, value in updated.items():
        name = back.get(key, key)
        if found is not None and name in found.paths and isinstance(value, str) and \
                _absolute(out.get(name), root) == _absolute(value, root):
            continue  # the same file: keep how the model wrote it
        out[name] = value
    return out


# --- results: tool_response and updatedToolOutput -------------------------------------------

_STRING = {"type": "string"}
#: The JSON Schema each response kind's ``updatedToolOutput`` must satisfy (what the
#: ``tool_response`` of that kind looks like), and how its text is read back.
RESPONSE_SCHEMAS: dict[str, dict[str, Any]] = {
    "bash": {"type": "object", "required": ["stdout"],
             "properties": {"stdout": _STRING, "stderr": _STRING,
                            "interrupted": {"type": "boolean"}, "isImage": {"type": "boolean"}}},
    "read": {"type": "object", "required": ["file"],
             "properties": {"type": _STRING, "file": {
                 "type": "object", "required": ["content"],
                 "properties": {"filePath": _STRING, "content": _STRING}}}},
    "file": {"type": "object", "required": ["output"],
             "properties": {"filePath": _STRING, "output": _STRING,
                            "success": {"type": "boolean"}}},
    "output": {"type": "object", "required": ["output"],
               "properties": {"output": _STRING, "success": {"type": "boolean"}}},
    "mcp": {"type": "array", "items": {"type": "object", "required": ["type", "text"],
                                       "properties": {"type": {"const": "text"},
                                                      "text": _STRING}}},
}


def response_kind(tool: str) -> str:
    if tool.startswith("mcp__"):
        return "mcp"
    found = TOOLS.get(tool)
    return found.response if found is not None else "output"


def tool_response(tool: str, arguments: Any, text: str, is_error: bool, meta: Mapping[str, Any],
                  root: str) -> Any:
    """What a PostToolUse hook reads as ``tool_response``: Claude Code's shape for the tool
    (``Bash``: ``stdout``, ``stderr``, ``interrupted``; ``Read``: ``file.content``; the file
    tools: ``filePath``), else ``{"output", "success"}``; MCP tools: text blocks."""
    kind = response_kind(tool)
    path = arguments.get("path") if isinstance(arguments, Mapping) else None
    if kind == "bash":
        return {"stdout": text, "stderr": "", "interrupted": bool(meta.get("timed_out")),
                "isImage": False, "exitCode": meta.get("exit_code")}
    if kind == "read":
        return {"type": "text", "file": {"filePath": _absolute(path, root), "content": text}}
    if kind == "file":
        return {"filePath": _absolute(path, root), "output": text, "success": not is_error}
    if kind == "mcp":
        return [{"type": "text", "text": text}]
    return {"output": text, "success": not is_error}


def updated_output_text(tool: str, value: Any) -> str:
    """The text the model reads for a hook's ``updatedToolOutput``; `ValueError` saying what
    is wrong when it does not have the tool's ``tool_response`` shape (it is then never
    applied, and the hook run is an error)."""
    import jsonschema

    kind = response_kind(tool)
    schema = RESPONSE_SCHEMAS[kind]
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value),
                    key=lambda e: list(map(str, e.path)))
    if errors:
        where = "/".join(str(p) for p in errors[0].path)
        raise ValueError(f"updatedToolOutput does not have the shape of {claude_name(tool)}'s "
                         f"tool_response ({kind}): {errors[0].message}"
                         + (f" at {where}" if where else ""))
    if kind == "bash":
        stderr = value.get("stderr") or ""
        return value["stdout"] + (("\n" + stderr) if stderr else "")
    if kind == "read":
        return str(value["file"]["content"])
    if kind == "mcp":
        return "\n".join(block["text"] for block in value)
    return str(value["output"])


__all__ = ["CLAUDE_NAMES", "RESPONSE_SCHEMAS", "TOOLS", "ToolName", "callgate_names",
           "claude_name", "from_claude", "response_kind", "to_claude", "tool_response",
           "updated_output_text"]
