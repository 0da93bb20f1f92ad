"""The session-history tools as declared data: names, descriptions, schemas and flags, with
their code named by `callgate.deferred` (issue 38). Registering the plugin imports this
module and neither the renderer nor the store's reader; ``tools/sessions.py`` is imported by
the first call."""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec, deferred
from callgate.store import SEARCH_KINDS

GROUPS = ("sessions",)


LIST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
                  "description": "How many sessions to list, newest first (default 20)."},
    },
}


LIST_DESCRIPTION = (
    "List the sessions recorded for this workspace, newest first: each one's id, when it "
    "started, how many tool calls it made and a preview (its first user message, else its "
    "first call). Use an id with read_session or history."
)


READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["session"],
    "properties": {
        "session": {"type": "string", "minLength": 1, "maxLength": 200,
                    "description": "The session's id (or a unique prefix of 8+ characters, "
                                   "or its name), as list_sessions shows it."},
        "max_turns": {"type": "integer", "minimum": 0, "maximum": 10000, "default": 50,
                      "description": "Show at most this many turns, the most recent (default "
                                     "50; 0 shows every turn)."},
        "show_tool_results": {"type": "boolean", "default": False,
                              "description": "Also show each tool call's result (as it was "
                                             "shown then, cut to 2000 characters)."},
    },
}


READ_DESCRIPTION = (
    "Read an earlier session of this workspace turn by turn: the user and assistant messages "
    "that were recorded and the tool calls of each turn with their outcome (results too with "
    "show_tool_results). System prompts are never recorded."
)


HISTORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["operation"],
    "properties": {
        "operation": {"type": "string", "enum": ["search", "around"],
                      "description": "search: ranked matches of query; around: the entries "
                                     "before and after one match."},
        "query": {"type": "string", "minLength": 1, "maxLength": 500,
                  "description": "search: the words to look for (any of them; rarer and more "
                                 "matching words rank higher)."},
        "scope": {"type": "string", "enum": ["project", "global"], "default": "project",
                  "description": "search: project (this workspace's sessions, the default) or "
                                 "global (every workspace's, if the host allows it)."},
        "kind": {"type": "array", "uniqueItems": True, "minItems": 1,
                 "items": {"type": "string", "enum": list(SEARCH_KINDS)},
                 "description": "search: what to look in; default every kind but "
                                "tool_output."},
        "tool_name": {"type": "string", "minLength": 1, "maxLength": 128,
                      "description": "search: only calls of this tool."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 8,
                  "description": "search: at most this many matches (default 8)."},
        "session": {"type": "string", "minLength": 1, "maxLength": 200,
                    "description": "around: the session of the match."},
        "message_index": {"type": "integer", "minimum": 1,
                          "description": "around: the match's message_index."},
        "before": {"type": "integer", "minimum": 0, "maximum": 10, "default": 3,
                   "description": "around: entries to show before it (default 3)."},
        "after": {"type": "integer", "minimum": 0, "maximum": 10, "default": 3,
                  "description": "around: entries to show after it (default 3)."},
    },
}


HISTORY_DESCRIPTION = (
    "Search what earlier sessions of this workspace said and did: user and assistant "
    "messages, tool inputs and tool errors (tool_output too when asked), ranked best first "
    "with a snippet and the message_index of each match. operation=\"around\" then shows the "
    "entries before and after a match."
)


#: ``structuredContent`` (MCP) of ``list_sessions``: the sessions as data, newest first.
LIST_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"sessions": {"type": "array", "items": {
        "type": "object",
        "properties": {
            "id": {"type": "string"}, "name": {"type": ["string", "null"]},
            "started": {"type": "number", "description": "Unix time."},
            "calls": {"type": "integer"}, "workspace": {"type": "string"},
            "status": {"type": "string"}, "preview": {"type": ["string", "null"]},
            "current": {"type": "boolean", "description": "This very session."}},
        "required": ["id", "started", "calls"]}}},
    "required": ["sessions"],
}


_CODE = "callgate_sessions.tools.sessions"

TOOLS = (
    ToolSpec(runs_at="host", name="list_sessions", description=LIST_DESCRIPTION,
             schema=LIST_SCHEMA, execute=deferred(f"{_CODE}:run_list"), read_only=True,
             groups=GROUPS, output_schema=LIST_OUTPUT_SCHEMA),
    ToolSpec(runs_at="host", name="read_session", description=READ_DESCRIPTION,
             schema=READ_SCHEMA, execute=deferred(f"{_CODE}:run_read"), read_only=True,
             groups=GROUPS),
    ToolSpec(runs_at="host", name="history", description=HISTORY_DESCRIPTION,
             schema=HISTORY_SCHEMA, execute=deferred(f"{_CODE}:run_history"), read_only=True,
             groups=GROUPS, validate=deferred(f"{_CODE}:check_history")),
)
