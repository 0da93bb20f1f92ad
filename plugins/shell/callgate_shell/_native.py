"""The shell's provider-native faces (issue 32): Anthropic's ``bash_20250124`` and OpenAI's
``shell`` (Responses). Every command runs as one ``bash`` call through the one pipeline
(permission rules, the sandbox, the spawn door); the results come back in the provider's
shape. callgate's shell runs each command in a fresh process, so Anthropic's ``restart``
has no session to restart and says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from callgate import ToolResult
from callgate.native import NativeFace, NativeInputError

#: the status line bash's result ends with (``[exit code 3]``)
_STATUS = re.compile(r"\n?\[exit code -?\d+\]\Z")
RESTARTED = ("callgate runs every command in a fresh bash process in the workspace root, so "
             "there is no shell session to restart: nothing carries over between commands")


def _bash_calls(item: Mapping[str, Any], session: Any) -> list[tuple[str, Any]]:
    value = item.get("input")
    if not isinstance(value, Mapping):
        raise NativeInputError("bash: input must be an object {command} or {restart: true}")
    if value.get("restart") is True and "command" not in value:
        return []
    if "command" not in value:
        raise NativeInputError("bash: input needs a command (or restart: true)")
    return [("bash", {"command": value["command"]})]


def _bash_answer(item: Mapping[str, Any], results: Sequence[ToolResult]) -> dict[str, Any]:
    if not results:
        result = ToolResult.ok(RESTARTED)
    else:
        [result] = results
    result.call_id = str(item.get("id") or result.call_id or "")
    from callgate_providers import render_result  # here: boot need not load the renderings

    return render_result(result, "anthropic")  # type: ignore[no-any-return]


BASH = NativeFace(
    rendering="anthropic-native",
    entry={"type": "bash_20250124", "name": "bash"},
    replaces=("bash",),
    handles=lambda item: item.get("type") == "tool_use" and item.get("name") == "bash",
    calls=_bash_calls,
    answer=_bash_answer,
)


def _action(item: Mapping[str, Any]) -> Mapping[str, Any]:
    action = item.get("action")
    if not isinstance(action, Mapping):
        raise NativeInputError("shell_call: action must be an object {commands, timeout_ms, "
                               "max_output_length}")
    return action


def _shell_calls(item: Mapping[str, Any], session: Any) -> list[tuple[str, Any]]:
    action = _action(item)
    commands = action.get("commands")
    if not isinstance(commands, list) or not commands:
        raise NativeInputError("shell_call: action.commands must be a non-empty list of "
                               "command lines")
    timeout = action.get("timeout_ms")
    calls = []
    for command in commands:
        arguments: dict[str, Any] = {"command": command}
        if timeout is not None:
            arguments["timeout_ms"] = timeout
        calls.append(("bash", arguments))
    return calls


def _outcome(result: ToolResult) -> dict[str, Any]:
    if result.meta.get("timed_out"):
        return {"type": "timeout"}
    code = result.meta.get("exit_code")
    return {"type": "exit", "exit_code": code if isinstance(code, int) else 1}


def _chunk(result: ToolResult, limit: int | None) -> dict[str, Any]:
    ran = isinstance(result.meta.get("exit_code"), int) or bool(result.meta.get("timed_out"))
    text = result.text
    if ran:  # stdout and stderr come combined, in the order written: all of it is stdout
        stdout, stderr = _STATUS.sub("", text), ""
    else:  # refused, invalid, not run: callgate's feedback is the error output
        stdout, stderr = "", text
    if limit is not None and limit >= 0:
        stdout, stderr = stdout[:limit], stderr[: max(0, limit - len(stdout))]
    return {"stdout": stdout, "stderr": stderr, "outcome": _outcome(result)}


def _shell_answer(item: Mapping[str, Any], results: Sequence[ToolResult]) -> dict[str, Any]:
    try:
        limit = _action(item).get("max_output_length")
    except NativeInputError:
        limit = None
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
    out: dict[str, Any] = {"type": "shell_call_output", "call_id": str(item.get("call_id") or ""),
                           "output": [_chunk(r, limit) for r in results]}
    if limit is not None:
        out["max_output_length"] = limit
    return out


SHELL = NativeFace(
    rendering="openai-responses-native",
    entry={"type": "shell"},
    replaces=("bash",),
    handles=lambda item: item.get("type") == "shell_call",
    calls=_shell_calls,
    answer=_shell_answer,
)

FACES = (BASH, SHELL)
