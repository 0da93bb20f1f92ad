"""What a hook said: its exit code, stderr and JSON output read as Claude Code defines them,
checked against the shape each event allows.

- exit 0: stdout is parsed as JSON when it is a JSON object (else it is plain text: context
  for SessionStart and UserPromptSubmit, nothing for the others);
- exit 2: blocked, stderr is the reason the model reads (PreToolUse, PreCompact,
  UserPromptSubmit), or feedback appended to the result (PostToolUse);
- any other exit, a timeout, a program that cannot start, output that is not the event's
  shape: the hook *failed*: a non-blocking error, or blocked when the hook is ``fail_closed``
  (callgate's addition, decided by the caller).

The JSON is checked strictly (`schema_for`): a field of the wrong type or one the event does
not have (``updatedToolOutput`` on PreToolUse) is an error naming it, never silently dropped.
The older ``{"decision": "approve" | "block"}`` form of PreToolUse is read as allow / deny.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

_MISSING: Any = object()
_TEXT = {"type": "string"}
_FLAG = {"type": "boolean"}

#: ``hookSpecificOutput`` fields each event allows, besides ``hookEventName``.
SPECIFIC: dict[str, dict[str, Any]] = {
    "PreToolUse": {"permissionDecision": {"enum": ["allow", "deny", "ask", "defer"]},
                   "permissionDecisionReason": _TEXT, "updatedInput": {"type": "object"},
                   "additionalContext": _TEXT},
    "PermissionRequest": {"decision": {
        "type": "object", "additionalProperties": False, "required": ["behavior"],
        "properties": {"behavior": {"enum": ["allow", "deny"]},
                       "updatedInput": {"type": "object"},
                       "updatedPermissions": {"type": "array"}, "message": _TEXT,
                       "interrupt": _FLAG}}},
    "PostToolUse": {"additionalContext": _TEXT, "updatedToolOutput": {},
                    "updatedMCPToolOutput": {}},
    "PostToolUseFailure": {"additionalContext": _TEXT},
    "SessionStart": {"additionalContext": _TEXT},
    "UserPromptSubmit": {"additionalContext": _TEXT},
    "SubagentStart": {"additionalContext": _TEXT},
    "SessionEnd": {},
    "SubagentStop": {},
    "PreCompact": {},
}
#: The top-level ``decision`` values each event allows.
DECISIONS: dict[str, list[str]] = {
    "PreToolUse": ["approve", "block", "allow", "deny"],
    "PostToolUse": ["block"],
    "PostToolUseFailure": ["block"],
    "UserPromptSubmit": ["block"],
    "SubagentStop": ["block"],
    "PreCompact": ["block"],
}


def schema_for(event: str) -> dict[str, Any]:
    """The JSON Schema of a hook's stdout JSON on ``event``."""
    specific = {"hookEventName": {"const": event}, **SPECIFIC.get(event, {})}
    properties: dict[str, Any] = {
        "continue": _FLAG, "stopReason": _TEXT, "suppressOutput": _FLAG,
        "systemMessage": _TEXT, "reason": _TEXT,
        "hookSpecificOutput": {"type": "object", "additionalProperties": False,
                               "required": ["hookEventName"], "properties": specific},
    }
    if event in DECISIONS:
        properties["decision"] = {"enum": DECISIONS[event]}
    return {"type": "object", "additionalProperties": False, "properties": properties}


@attrs.frozen
class Outcome:
    """One hook run, read: what it asks of the call. ``error`` set means the hook failed."""

    blocked: str | None = None  # exit 2 / deny / block: the reason the model reads
    decision: str | None = None  # allow / ask / deny (PreToolUse), allow / deny (PermissionRequest)
    reason: str | None = None
    updated_input: dict[str, Any] | None = None
    context: str | None = None  # additionalContext, or plain stdout where that is context
    updated_output: Any = _MISSING
    feedback: str | None = None  # PostToolUse: decision block's reason, or exit 2's stderr
    stop: str | None = None  # continue: false, with its stopReason
    system_message: str | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def has_updated_output(self) -> bool:
        return self.updated_output is not _MISSING

    def summary(self) -> dict[str, Any]:
        """The outcome as the session record and ``result.meta`` keep it."""
        out: dict[str, Any] = {}
        for name in ("blocked", "decision", "reason", "context", "feedback", "stop",
                     "system_message", "error"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.updated_input is not None:
            out["updated_input"] = self.updated_input
        if self.has_updated_output:
            out["updated_output"] = self.updated_output
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def interpret(event: str, exit_code: int | None, stdout: str, stderr: str, *,
              failure: str | None = None) -> Outcome:
    """Read one run: ``failure`` is set when the hook did not finish (a timeout, a program
    that could not start, an HTTP request that failed)."""
    if failure is not None:
        return Outcome(error=failure)
    if exit_code == 2:
        reason = stderr.strip() or "a hook blocked it (exit 2, nothing on stderr)"
        if event in ("PostToolUse", "PostToolUseFailure"):
            return Outcome(feedback=reason)
        if event in ("PreToolUse", "PreCompact", "UserPromptSubmit", "PermissionRequest"):
            return Outcome(blocked=reason, decision="deny" if event == "PreToolUse" else None,
                           reason=reason)
        return Outcome(notes=(f"exit 2 on {event} blocks nothing; stderr: {reason[:500]}",))
    if exit_code != 0:
        detail = stderr.strip()[:1000]
        return Outcome(error=f"exited with status {exit_code}" + (f": {detail}" if detail
                                                                     else ""))
    text = stdout.strip()
    if not text:
        return Outcome()
    if not text.startswith("{"):
        if event in ("SessionStart", "UserPromptSubmit"):
            return Outcome(context=text)
        return Outcome()
    try:
        data = json.loads(text)
    except ValueError as exc:
        return Outcome(error=f"stdout starts like JSON but is not valid JSON ({exc})")
    return read_json(event, data)


def read_json(event: str, data: Any) -> Outcome:
    """A hook's JSON output on ``event``, checked (`schema_for`) and read."""
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(schema_for(event)).iter_errors(data),
                    key=lambda e: (len(e.path), list(map(str, e.path))))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.path) or "the output"
        if err.validator == "additionalProperties":
            return Outcome(error=f"its JSON output is not {event}'s shape: {where}: "
                           f"{err.message} (a field {event} does not have is an error, not "
                           "ignored)")
        return Outcome(error=f"its JSON output is not {event}'s shape: {where}: {err.message}")
    specific = data.get("hookSpecificOutput") or {}
    notes: list[str] = []
    stop = None
    if data.get("continue") is False:
        stop = data.get("stopReason") or "a hook asked to stop"
    decision = reason = blocked = feedback = None
    updated_input = None
    updated_output: Any = _MISSING
    legacy = data.get("decision")
    if event == "PreToolUse":
        decision = specific.get("permissionDecision")
        reason = specific.get("permissionDecisionReason")
        if decision is None and legacy is not None:  # the older form
            decision = {"approve": "allow", "block": "deny"}.get(legacy, legacy)
            reason = data.get("reason")
        if decision == "defer":
            notes.append("permissionDecision defer: callgate has no deferred calls; the "
                         "hook abstains")
            decision = None
        updated_input = specific.get("updatedInput")
        if decision == "deny":
            blocked = reason or "a PreToolUse hook denied it"
    elif event == "PermissionRequest":
        answer = specific.get("decision")
        if answer is not None:
            decision = answer["behavior"]
            reason = answer.get("message")
            updated_input = answer.get("updatedInput")
            if answer.get("updatedPermissions"):
                notes.append("updatedPermissions: callgate keeps no permission rules from a "
                             "hook; ignored")
    elif event in ("PostToolUse", "PostToolUseFailure"):
        if legacy == "block":
            feedback = data.get("reason") or "a PostToolUse hook flagged the result"
        if "updatedToolOutput" in specific:
            updated_output = specific["updatedToolOutput"]
        elif "updatedMCPToolOutput" in specific:
            updated_output = specific["updatedMCPToolOutput"]
    elif event in ("UserPromptSubmit", "PreCompact"):
        if legacy == "block":
            blocked = data.get("reason") or f"a {event} hook blocked it"
    elif event == "SubagentStop" and legacy == "block":
        notes.append("decision block on SubagentStop: callgate does not run the subagent's "
                     "loop, so it cannot keep it going; ignored")
    return Outcome(blocked=blocked, decision=decision, reason=reason,
                   updated_input=updated_input, context=specific.get("additionalContext"),
                   updated_output=updated_output, feedback=feedback, stop=stop,
                   system_message=data.get("systemMessage"), notes=tuple(notes))


__all__ = ["DECISIONS", "SPECIFIC", "Outcome", "interpret", "read_json", "schema_for"]
