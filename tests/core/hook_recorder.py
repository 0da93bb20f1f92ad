"""Test-only plugins that implement every pipeline hook and record what each one saw.

`HookRecorder` answers nothing (except the approver, which allows) and appends
``(hook, call name, tool name, arguments, via name)`` per hook call, so a test
reads the order of the hooks and the effective call each one was given.
`Wrappers` implements every pipeline hook as a ``wrapper=True`` implementation
and records the outcome each one saw after the ordinary implementations ran.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from callgate import Decision, Registry, ToolCall, ToolResult, ToolSpec, Violation, hookimpl
from callgate.hookspecs import Refuse, Replace

Seen = tuple[str, str, str, Any, str | None]

PIPELINE_HOOKS = ("callgate_validate_arguments", "callgate_pre_tool_use",
                  "callgate_check_permission", "callgate_ask_permission",
                  "callgate_shape_result")


class Tools:
    """``write_note`` (a writer, so permission asks in ``mode = "ask"``) and ``peek``
    (hidden, read-only: reached through the proxy on the lean surface)."""

    __name__ = "hooktools"

    def __init__(self) -> None:
        self.ran: list[tuple[str, Any]] = []

    def _run(self, name: str) -> Any:
        def run(ctx: Any, args: dict[str, Any]) -> str:
            self.ran.append((name, args))
            return f"{name} ran"
        return run

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        schema = {"type": "object", "properties": {"text": {"type": "string"}},
                  "required": ["text"], "additionalProperties": False}
        registry.add(ToolSpec(name="write_note", description="Write a note.", schema=schema,
                              execute=self._run("write_note"), visibility="surface"))
        registry.add(ToolSpec(name="peek", description="Look at a note.", schema=schema,
                              execute=self._run("peek"), read_only=True))


class HookRecorder:
    """Records every hook call; ``refuse``/``replace`` make pre-tool-use answer."""

    __name__ = "recorder"

    def __init__(self, *, refuse: str | None = None,
                 replace: dict[str, Any] | None = None) -> None:
        self.seen: list[Seen] = []
        self.lifecycle: list[str] = []
        self.refuse = refuse
        self.replace = replace

    def _note(self, hook: str, call: ToolCall, tool: ToolSpec) -> None:
        via = call.via.name if call.via is not None else None
        self.seen.append((hook, call.name, tool.name, call.arguments, via))

    def hooks(self) -> list[str]:
        return [hook for hook, *_ in self.seen]

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        self.lifecycle.append("register_tools")

    @hookimpl
    def callgate_validate_arguments(self, call: ToolCall, tool: ToolSpec,
                                    session: Any) -> list[Violation]:
        self._note("validate_arguments", call, tool)
        return []

    @hookimpl
    def callgate_pre_tool_use(self, call: ToolCall, tool: ToolSpec,
                              session: Any) -> Refuse | Replace | None:
        self._note("pre_tool_use", call, tool)
        if self.refuse is not None:
            return Refuse(self.refuse)
        if self.replace is not None and call.arguments != self.replace:
            return Replace(self.replace)
        return None

    @hookimpl
    def callgate_check_permission(self, call: ToolCall, tool: ToolSpec,
                                  session: Any) -> Decision | None:
        self._note("check_permission", call, tool)
        return None

    @hookimpl
    def callgate_ask_permission(self, call: ToolCall, tool: ToolSpec, session: Any,
                                preview: Any) -> Decision:
        self._note("ask_permission", call, tool)
        return Decision("allow", reason="the recorder approves")

    @hookimpl
    def callgate_shape_result(self, call: ToolCall, tool: ToolSpec, result: ToolResult,
                              session: Any) -> None:
        self._note("shape_result", call, tool)

    @hookimpl
    def callgate_session_start(self, session: Any) -> None:
        self.lifecycle.append("session_start")

    @hookimpl
    def callgate_turn_start(self, session: Any, origin: str) -> None:
        self.lifecycle.append(f"turn_start:{origin}")

    @hookimpl
    def callgate_session_end(self, session: Any) -> None:
        self.lifecycle.append("session_end")


class Wrappers:
    """A ``wrapper=True`` implementation of every pipeline hook (and of registration): each
    records that it ran and the outcome the ordinary implementations produced, and passes
    it on (the shaper's wrapper appends a line, to prove it can change the outcome)."""

    __name__ = "wrappers"

    def __init__(self) -> None:
        self.outcomes: list[tuple[str, Any]] = []

    @hookimpl(wrapper=True)
    def callgate_register_tools(self, registry: Registry) -> Generator[None, Any, Any]:
        outcome = yield
        self.outcomes.append(("register_tools", sorted(registry.names())))
        return outcome

    @hookimpl(wrapper=True)
    def callgate_validate_arguments(self, call: ToolCall) -> Generator[None, Any, Any]:
        outcome = yield
        self.outcomes.append(("validate_arguments", list(outcome)))
        return outcome

    @hookimpl(wrapper=True)
    def callgate_pre_tool_use(self, call: ToolCall) -> Generator[None, Any, Any]:
        outcome = yield
        self.outcomes.append(("pre_tool_use", list(outcome)))
        return outcome

    @hookimpl(wrapper=True)
    def callgate_check_permission(self, call: ToolCall) -> Generator[None, Any, Any]:
        outcome = yield
        self.outcomes.append(("check_permission", list(outcome)))
        return outcome

    @hookimpl(wrapper=True)
    def callgate_ask_permission(self, call: ToolCall) -> Generator[None, Any, Any]:
        outcome = yield
        self.outcomes.append(("ask_permission", outcome))
        return outcome

    @hookimpl(wrapper=True)
    def callgate_shape_result(self, result: ToolResult) -> Generator[None, Any, Any]:
        outcome = yield
        self.outcomes.append(("shape_result", [r.text for r in outcome]))
        return [*outcome, result.with_text(result.text + "\n[seen by a wrapper]")]

    def hooks(self) -> list[str]:
        return [hook for hook, _ in self.outcomes]
