"""The plugin: Claude Code's hooks and Codex's rules on callgate's own hook points.

- ``callgate_register_tools``: claims ``[hooks]`` and ``[claude_code]``, reads the user's
  sources (the boot report names everything not applied), protects the workspace files it
  reads, and adds ``session.extension(EXTENSION)``;
- ``callgate_session_start`` / ``_end``: the workspace's sources (trusted workspaces only),
  imported modes, SessionStart / SubagentStart, SessionEnd / SubagentStop;
- ``callgate_pre_tool_use``: PreToolUse (and PreCompact for ``compress``), awaited;
- ``callgate_check_permission``: a hook's allow or ask, and the imported rules;
- ``callgate_ask_permission`` (a wrapper): PermissionRequest before the integrator's approver;
- ``callgate_post_tool_use``: PostToolUse / PostToolUseFailure;
- ``callgate_shape_result`` (a wrapper): context for the model, the runs in ``meta`` and in
  the session's record;
- `register`: ``callgate rules check | explain | lint`` (the ``callgate.commands`` entry
  point; the subcommands are in ``_rules_command``).
"""

from __future__ import annotations

import argparse
import inspect
import logging
import weakref
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from callgate import Host, Registry, SessionKey, ToolCall, ToolResult, ToolSpec, hookimpl

from ._setup import HostHooks
from ._sources import PROTECTED
from .config import HOOKS_SCHEMA, SETTINGS_SCHEMA

if TYPE_CHECKING:
    # a session's runner (the handlers, their processes and HTTP requests) is imported when
    # the first session opens, not while `callgate tools` registers (issue 38)
    from ._events import SessionHooks

log = logging.getLogger("callgate.hooks")
#: ``session.extension(EXTENSION)``: this session's hooks and imported rules (`SessionHooks`)
EXTENSION: SessionKey[SessionHooks] = SessionKey("hook_runner")
RUNTIME = "hooks.runtime"
_hosts: weakref.WeakKeyDictionary[Host, HostHooks] = weakref.WeakKeyDictionary()


def host_hooks(host: Host) -> HostHooks | None:
    """The plugin's state of ``host`` (``None`` when the plugin did not register there)."""
    return _hosts.get(host)


def _runner(session: Any) -> SessionHooks | None:
    if _hosts.get(session.host) is None:
        return None
    return session.extension(EXTENSION)


def _session_hooks(state: HostHooks, session: Any) -> SessionHooks:
    from ._events import SessionHooks

    return SessionHooks(state, session)


def _active(state: HostHooks) -> bool:
    """Whether anything could run or apply on this host (else the plugin adds no hook at
    all, and a call costs what it cost without it)."""
    return bool(state.user.handlers or state.user.rules or state.user.modes
                or state.settings.read)


@hookimpl
def callgate_register_tools(registry: Registry, host: Host) -> None:
    hooks_table = registry.add_config("hooks", HOOKS_SCHEMA)
    table = registry.add_config("claude_code", SETTINGS_SCHEMA)
    state = HostHooks.boot(registry, host, hooks_table, table)
    _hosts[host] = state
    for agent in state.settings.read:
        for pattern in PROTECTED[agent]:
            registry.protect(pattern, f"{agent} settings callgate-hooks reads (hooks and "
                             "permission rules) for the next session")
    registry.add_session_extension(EXTENSION, lambda session: _session_hooks(state, session))
    for note in state.report():
        log.warning(note)
        host.warnings.append(note)
    if not _active(state):
        return
    host.pm.register(Runtime(), name=RUNTIME)
    registry.add_info(f"{len(state.user.handlers)} hook(s) and {len(state.user.rules)} "
                      "imported rule(s) from the user's sources; reads "
                      f"{', '.join(state.settings.read) or 'no'} settings files")


class Runtime:
    """The pipeline hooks, registered only on a host where something could run or apply."""

    __name__ = RUNTIME

    @hookimpl
    def callgate_session_start(self, session: Any) -> None:
        runner = _runner(session)
        if runner is None:
            return
        for note in runner.notes:
            log.warning(str(note))
        runner.session_start()

    @hookimpl
    def callgate_session_end(self, session: Any) -> None:
        runner = _runner(session)
        if runner is not None:
            runner.session_end()

    @hookimpl
    def callgate_pre_tool_use(self, call: ToolCall, tool: ToolSpec, session: Any) -> Any:
        runner = _runner(session)
        if runner is None or not runner.handlers:
            return None

        async def answer() -> Any:
            await runner.started()
            return await runner.pre_tool_use(call, tool)

        return answer()

    @hookimpl
    def callgate_check_permission(self, call: ToolCall, tool: ToolSpec, session: Any) -> Any:
        runner = _runner(session)
        if runner is None:
            return None
        decisions = runner.permission(call, tool)
        if not decisions:
            return None
        return next(d for action in ("deny", "ask", "allow") for d in decisions
                    if d.action == action)

    @hookimpl(wrapper=True)
    def callgate_ask_permission(self, call: ToolCall, tool: ToolSpec, session: Any,
                                preview: Any) -> Generator[None, Any, Any]:
        others = yield
        runner = _runner(session)
        if runner is None or not any(h.event == "PermissionRequest" for h in runner.handlers):
            return others

        async def answer() -> Any:
            mine = await runner.permission_request(call, tool)
            if mine is not None:
                if inspect.iscoroutine(others):
                    others.close()  # the integrator's approver is not asked
                return mine
            return await others if inspect.isawaitable(others) else others

        return answer()

    @hookimpl
    def callgate_post_tool_use(self, call: ToolCall, tool: ToolSpec, result: ToolResult,
                               session: Any) -> Any:
        runner = _runner(session)
        if runner is None or not runner.handlers:
            return None
        return runner.post_tool_use(call, tool, result)

    @hookimpl(wrapper=True)
    def callgate_shape_result(self, call: ToolCall, tool: ToolSpec, result: ToolResult,
                              session: Any) -> Generator[None, Any, Any]:
        outcome = yield
        runner = _runner(session)
        if runner is None:
            return outcome
        latest = next((r for r in reversed(outcome or []) if isinstance(r, ToolResult)),
                      result)
        shaped = runner.shaped(call, latest)
        if shaped is None:
            return outcome
        return [*(outcome or []), shaped]


def register(subparsers: Any) -> None:
    """Add ``rules`` to the ``callgate`` command (entry point ``callgate.commands``)."""
    from ._rules_command import cmd_check, cmd_explain, cmd_lint, usage_error

    p = subparsers.add_parser(
        "rules", help="test permission rules: check a command line, explain a call, lint",
        description="Test the permission rules a session would apply (callgate's own, and "
        "those imported from Claude Code and Codex settings): the decision for a command line, "
        "every pipeline stage for one call, and rules that can never match. Exit codes: 0 "
        "allow, 1 deny, 2 ask, 3 error.")
    p.error = usage_error(p)  # type: ignore[method-assign]
    sub = p.add_subparsers(dest="rules_command", required=True, metavar="SUBCOMMAND")

    def common(q: argparse.ArgumentParser) -> None:
        q.error = usage_error(q)  # type: ignore[method-assign]
        q.add_argument("--config", help="a callgate.toml to use (default: the workspace's, "
                                        "over your user config)")
        q.add_argument("--workspace", help="the workspace (default: the current directory)")
        q.add_argument("--json", action="store_true", help="print one JSON object")

    q = sub.add_parser("check", help="the decision for a shell command line",
                       description="The decision for a shell call running LINE, who decided, "
                       "and the rule that speaks for every command the line runs.")
    common(q)
    q.add_argument("line", nargs=argparse.REMAINDER,
                   help="the command line, after -- (callgate rules check -- git push)")
    q.set_defaults(func=cmd_check)
    q = sub.add_parser("explain", help="every stage's verdict for one call, not run",
                       description="Every pipeline stage's verdict for one call (validation, "
                       "pre-tool-use hooks, every permission answer, host gates) as the "
                       "pipeline would decide it, without running the tool. TOOL may be "
                       "callgate's name or Claude Code's (Bash, Read, Edit, ...).")
    common(q)
    q.add_argument("tool", help="the tool, e.g. bash or Bash")
    q.add_argument("arguments", help="its arguments as a JSON object")
    q.set_defaults(func=cmd_explain)
    q = sub.add_parser("lint", help="rules that never match, shadowed rules, unknown names",
                       description="Rules that can never match, rules another rule shadows, "
                       "unknown tool names, and globs that look like Claude Code's mcp__x__* "
                       "and are literal here. Exit 0: nothing found, 1: findings.")
    common(q)
    q.set_defaults(func=cmd_lint)


__all__ = ["EXTENSION", "RUNTIME", "Runtime", "host_hooks", "register"]
