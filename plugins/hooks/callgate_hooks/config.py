"""The plugin's config tables: ``[hooks]`` (hooks in Claude Code's shape, in callgate's own
config) and ``[claude_code]`` (which other agents' settings files to read, and how hooks run).

Every key names a program, a path or a limit, so every key is user-only (``x-workspace =
"user"``): a workspace config callgate does not trust can neither add a hook nor point the
plugin at other settings files. ``fail_closed`` may only be turned on by a workspace (a
stricter hook failure).
"""

from __future__ import annotations

from typing import Any

#: The events a hook may be attached to (Claude Code's names); each is said in docs/hooks.md.
EVENTS: tuple[str, ...] = (
    "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "SessionStart",
    "SessionEnd", "SubagentStart", "SubagentStop", "PreCompact", "UserPromptSubmit",
)
#: Events whose matcher is a tool name (the others match what their event says: startup,
#: resume, an agent type, manual).
TOOL_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "PostToolUse",
                         "PostToolUseFailure"})
#: Claude Code events callgate has no moment for: read from a settings file, said at boot.
NOT_HERE: dict[str, str] = {
    "Stop": "callgate is not the agent loop: the integrator decides when a turn ends",
    "StopFailure": "callgate is not the agent loop",
    "Notification": "callgate sends no notifications (approvals go to the integrator's "
                    "approver)",
    "PostCompact": "callgate's compress tool has no after-compaction moment",
    "PermissionDenied": "a denial is the call's result, which PostToolUse does not see",
    "UserPromptExpansion": "callgate does not expand prompts",
    "Setup": "callgate has no setup phase",
    "ConfigChange": "callgate reads its config once, at boot",
    "InstructionsLoaded": "callgate loads no instruction files",
    "TaskCompleted": "callgate has no task list events",
    "TeammateIdle": "callgate has no agent teams",
    "WorktreeCreate": "callgate creates no worktrees",
    "WorktreeRemove": "callgate creates no worktrees",
    "Elicitation": "callgate's MCP client answers no elicitation",
    "ElicitationResult": "callgate's MCP client answers no elicitation",
    "CwdChanged": "a callgate session's directory never changes",
    "FileChanged": "callgate has no file-change events",
    "PreModelSwitch": "callgate does not choose the model",
    "PostModelSwitch": "callgate does not choose the model",
}
DEFAULT_TIMEOUT_S = 60

HANDLER_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["type"],
    "properties": {
        "type": {"enum": ["command", "http"]},
        "command": {"type": "string", "minLength": 1},
        "url": {"type": "string", "minLength": 1},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "allowedEnvVars": {"type": "array", "items": {"type": "string"}},
        "timeout": {"type": "number", "exclusiveMinimum": 0},
        "fail_closed": {"type": "boolean"},
        "if": {"type": "string", "minLength": 1},
        "async": {"type": "boolean"},
        "once": {"type": "boolean"},
        "statusMessage": {"type": "string"},
    },
}
GROUP_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["hooks"],
    "properties": {
        "matcher": {"type": "string"},
        "hooks": {"type": "array", "minItems": 1, "items": HANDLER_SCHEMA},
    },
}

HOOKS_SCHEMA: dict[str, Any] = {
    # hooks are programs: only the user config (or a trusted workspace's) adds them
    "type": "object", "additionalProperties": False, "x-workspace": "user", "x-kind": "program",
    "properties": {event: {"type": "array", "items": GROUP_SCHEMA, "default": [],
                           "x-workspace": "user", "x-kind": "program"} for event in EVENTS},
}

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {
        # whose settings files to read: they name programs to run and rules that allow
        "read": {"type": "array", "items": {"enum": ["claude", "codex"]}, "default": [],
                 "uniqueItems": True, "x-workspace": "user", "x-kind": "program"},
        "claude_dir": {"type": "string", "default": "~/.claude", "x-workspace": "user",
                       "x-kind": "path"},
        "codex_dir": {"type": "string", "default": "", "x-workspace": "user",
                      "x-kind": "path"},
        # a hook failure blocking is stricter: a workspace may turn it on, never off
        "fail_closed": {"type": "boolean", "default": False, "x-workspace": [False, True]},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600,
                      "default": DEFAULT_TIMEOUT_S, "x-workspace": "user", "x-kind": "limit"},
    },
}

__all__ = ["DEFAULT_TIMEOUT_S", "EVENTS", "GROUP_SCHEMA", "HANDLER_SCHEMA", "HOOKS_SCHEMA",
           "NOT_HERE", "SETTINGS_SCHEMA", "TOOL_EVENTS"]
