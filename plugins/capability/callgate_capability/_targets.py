"""``call``: what a capability id resolves to, for the pipeline to run (host.md §3 proxy calls).

Resolution never starts anything. It returns a `Target` (the pipeline then
validates, runs hooks and permission under the target's own name, the gates
and the target's execute, once) or an unexecuted result (``unavailable``, a
``config_error`` for a live schema that does not compile).

MCP targets carry an `McpPlan`: what was approved (server identity, safety
hints). Right before a connect and before ``tools/call`` the plan re-reads
the server's enablement, the exact deny rules and the identity, and a deferred
target (server not connected) validates its arguments against the live schema
once the server is up. Nothing invalid, unapproved or changed is sent.
"""

from __future__ import annotations

from typing import Any

import attrs
from callgate import Target, ToolContext, ToolError, ToolResult, ToolSpec

from . import _policy
from ._cache import McpToolInfo
from ._ids import TOOL_RESULT_ID, CapabilityId, did_you_mean, parse
from ._inventory import Inventory, compact, unavailable
from ._keys import MCP_SERVERS
from ._names import connect_permission_name, tool_permission_name
from ._tool_result import SPEC as TOOL_RESULT_SPEC

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {},
                                "additionalProperties": False}
# A deferred target's stand-in schema: the live schema validates once the server is up.
DEFERRED_SCHEMA: dict[str, Any] = {"type": "object"}


def resolve(ctx: ToolContext, args: dict[str, Any]) -> Target | ToolResult | None:
    """``use_capability``'s ``resolve_target``: ``None`` for its own actions."""
    if args.get("action") != "call":
        return None
    cap = parse(args["capability_id"])
    assert cap is not None  # the envelope validator has checked the form
    arguments = args.get("arguments")
    if arguments is None:  # null is {}, as a direct call's null arguments are
        arguments = {}
    inventory = Inventory(ctx.session)
    if cap.kind == "tool":
        return _tool_target(ctx, inventory, cap, arguments)
    if cap.kind == "session":
        if cap.text != TOOL_RESULT_ID:
            return unavailable(cap.text, f'session capability "{cap.name}" does not exist'
                               + did_you_mean(cap.text, [TOOL_RESULT_ID]))
        return Target(tool=TOOL_RESULT_SPEC, arguments=arguments, label=cap.text,
                      permission_name=TOOL_RESULT_SPEC.name, read_only=True)
    if cap.kind == "mcp-server":
        return _server_target(ctx, inventory, cap, arguments)
    return _mcp_tool_target(ctx, inventory, cap, arguments)


# --- tool:<name> -----------------------------------------------------------------------


def _tool_target(ctx: ToolContext, inventory: Inventory, cap: CapabilityId,
                 arguments: Any) -> Target | ToolResult:
    spec = inventory.tool_spec(cap.name)
    if spec is None:
        return inventory.unknown_tool(cap)
    if spec.alias_of and spec.execute is None and spec.alias_args is not None:
        # An old name: validate against its own schema, then run the primary.
        checked, error = ctx.session.check_arguments(spec, arguments, inside_capability=True,
                                                     call_id=ctx.call.id)
        if error is not None:
            return error
        primary = ctx.session.available_tools().get(spec.alias_of)
        if primary is None:
            return inventory.unknown_tool(cap)
        return Target(tool=primary, arguments=spec.alias_args(checked), label=cap.text)
    return Target(tool=spec, arguments=arguments, label=cap.text)


# --- mcp-server:<s> --------------------------------------------------------------------


def _server_target(ctx: ToolContext, inventory: Inventory, cap: CapabilityId,
                   arguments: Any) -> Target | ToolResult:
    server = cap.name
    refused = inventory.check_server(cap.text, server, for_call=True)
    if refused is not None:
        return refused
    servers = inventory.servers
    config = servers.config(server)
    assert config is not None
    plan = McpPlan(server=server, tool=None, identity=config.identity, cap_id=cap.text,
                   approved_read_only=False, approved_destructive=False)
    connected = servers.live(server) is not None
    spec = ToolSpec(runs_at="host", name=connect_permission_name(server), schema=EMPTY_SCHEMA,
                    description=f"Connect MCP server {server} and list its tools.",
                    execute=plan.directory if connected else plan.connect,
                    read_only=connected, plugin=ctx.tool.plugin)
    fallback = _policy.mcp_fallback(ctx.host, read_only=connected, destructive=False,
                                    trusted=config.trusted)
    return Target(tool=spec, arguments=arguments, label=cap.text,
                  permission_name=connect_permission_name(server), read_only=connected,
                  destructive=False, fallback=fallback)  # type: ignore[arg-type]


# --- mcp-tool:<s>/<t> -------------------------------------------------------------------


def _mcp_tool_target(ctx: ToolContext, inventory: Inventory, cap: CapabilityId,
                     arguments: Any) -> Target | ToolResult:
    server = cap.server or ""
    refused = inventory.check_server(cap.text, server, for_call=True)
    if refused is not None:
        return refused
    servers = inventory.servers
    config = servers.config(server)
    assert config is not None
    permission = tool_permission_name(server, cap.name)
    live = servers.live(server)
    if live is not None:
        info = live.get(cap.name)
        if info is None:
            return inventory.unknown_mcp_tool(cap, "live", list(live.values()))
        error = info.schema_error(ctx.host)
        if error is not None:
            return schema_config_error(ctx, server, cap.name, info, error)
        read_only, destructive = _policy.gate_hints(config, info)
        plan = McpPlan(server=server, tool=cap.name, identity=config.identity,
                       cap_id=cap.text, approved_read_only=read_only,
                       approved_destructive=destructive, validated_fp=info.fingerprint)
        spec = ToolSpec(runs_at="host", name=permission, schema=info.input_schema,
                        description=info.description, execute=plan.call_live,
                        read_only=read_only, destructive=destructive,
                        plugin=ctx.tool.plugin)
        validate = True
    else:
        cached = servers.cached(server)
        info = None
        if cached is not None:
            info = next((t for t in cached.tools if t.name == cap.name), None)
            if info is None:
                return inventory.unknown_mcp_tool(cap, "cache", list(cached.tools))
        # No cache entry: judged a (non-destructive) writer until the live listing says more.
        read_only, destructive = _policy.gate_hints(config, info)
        plan = McpPlan(server=server, tool=cap.name, identity=config.identity,
                       cap_id=cap.text, approved_read_only=read_only,
                       approved_destructive=destructive, deferred=True)
        spec = ToolSpec(runs_at="host", name=permission, schema=DEFERRED_SCHEMA,
                        description=info.description if info is not None else "",
                        execute=plan.call, read_only=read_only, destructive=destructive,
                        plugin=ctx.tool.plugin)
        validate = False
    fallback = _policy.mcp_fallback(ctx.host, read_only=read_only, destructive=destructive,
                                    trusted=config.trusted)
    if validate and config.trusted and _policy.ordinary_child(ctx.session):
        # the contract's trusted MCP path for ordinary subagents: a live (authorized)
        # connection plus the explicit rules, never the parent's ask fallback
        fallback = "allow"
    return Target(tool=spec, arguments=arguments, label=cap.text, permission_name=permission,
                  read_only=read_only, destructive=destructive,
                  fallback=fallback, validate=validate)  # type: ignore[arg-type]


def schema_config_error(ctx: ToolContext, server: str, tool: str, info: McpToolInfo,
                        reason: str) -> ToolResult:
    """A live schema that does not compile: nothing is sent; counted as skipped."""
    fp = info.fingerprint
    sig = f"argument_validation:{tool_permission_name(server, tool)}:{fp}:schema"
    ctx.session.count("skipped")
    text = (f'MCP tool "{tool}" on "{server}" has an input schema that does not compile '
            f"({reason}); this is a server problem, not the arguments: not executed\n"
            f"signature: {sig}")
    return ToolResult.failure("config_error", text, sig, {"signature": sig, "executed": False,
                                                          "schema_fingerprint": fp})


# --- the plan an MCP target carries ---------------------------------------------------------


@attrs.frozen
class McpPlan:
    """What was approved for one MCP connect or call, and how to carry it out."""

    server: str
    tool: str | None
    identity: str
    cap_id: str
    approved_read_only: bool
    approved_destructive: bool
    deferred: bool = False
    validated_fp: str | None = None

    def _refuse(self, message: str) -> ToolResult:
        return ToolResult.failure("unavailable", message, f"unavailable:{self.cap_id}",
                                  {"executed": False})

    def recheck(self, ctx: ToolContext, *, connecting: bool) -> ToolResult | None:
        """Right before a connect or ``tools/call``: enablement, deny rules, identity."""
        servers = ctx.session.extension(MCP_SERVERS)
        config = servers.config(self.server)
        nothing = "nothing was started" if connecting else "nothing was called"
        label = f'MCP server "{self.server}"'
        if config is None or not config.enabled:
            return self._refuse(f"{label} was disabled after the call was approved; {nothing}")
        if config.identity != self.identity:
            return self._refuse(f"{label} configuration changed after resolution; call again "
                                f"({nothing})")
        names = [tool_permission_name(self.server, self.tool)] if self.tool else []
        if connecting:
            names.insert(0, connect_permission_name(self.server))
        for name in names:
            rule = _policy.exact_deny(ctx.host, ctx.session, name)
            if rule:
                return self._refuse(f"{name} is now denied by rule {rule}; {nothing}")
        return None

    # execute of a connect target (server not connected when resolved)
    def connect(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        refused = self.recheck(ctx, connecting=True)
        if refused is not None:
            return refused
        ctx.session.extension(MCP_SERVERS).connect(self.server, ctx.cancelled)
        return self.directory(ctx, args)

    # execute of a connected server's call: its live directory
    def directory(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        doc = Inventory(ctx.session).server_directory(self.server)
        return ToolResult.ok(compact(doc), {"server": self.server})

    # execute of an MCP tool target (deferred: the server connects first, blocking)
    def call(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        assert self.tool is not None
        servers = ctx.session.extension(MCP_SERVERS)
        live = servers.live(self.server)
        if live is None:
            refused = self.recheck(ctx, connecting=True)
            if refused is not None:
                return refused
            try:
                servers.connect(self.server, ctx.cancelled)
            except ToolError as exc:
                return exc.to_result()
            live = servers.live(self.server) or {}
        checked = self._checked(ctx, live, args)
        if isinstance(checked, ToolResult):
            return checked
        return servers.call(self.server, self.tool, checked, ctx.cancelled, ctx.progress)

    # execute of a live MCP tool target: on the session's event loop, awaiting the MCP
    # loop thread's answer (no worker thread between the two loops)
    async def call_live(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        assert self.tool is not None
        servers = ctx.session.extension(MCP_SERVERS)
        live = servers.live(self.server)
        if live is None:  # gone since resolution: it connects again, which blocks
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self.call, ctx, args)
        checked = self._checked(ctx, live, args)
        if isinstance(checked, ToolResult):
            return checked
        return await servers.call_async(self.server, self.tool, checked, ctx.cancelled,
                                        ctx.progress)

    def _checked(self, ctx: ToolContext, live: dict[str, McpToolInfo], args: dict[str, Any]
                 ) -> dict[str, Any] | ToolResult:
        """Right before ``tools/call``: the tool is still offered, its live schema compiles
        and (when it changed since resolution) takes the arguments, its hints did not
        relax, and the server's enablement, deny rules and identity still hold. The
        arguments to send, or the refusal."""
        assert self.tool is not None
        info = live.get(self.tool)
        if info is None:
            pool = did_you_mean(self.tool, list(live), f"mcp-tool:{self.server}/{{}}")
            return unavailable(self.cap_id, f'MCP tool "{self.tool}" is not offered by server '
                               f'"{self.server}"{pool}')
        error = info.schema_error(ctx.host)
        if error is not None:
            return schema_config_error(ctx, self.server, self.tool, info, error)
        if self.validated_fp != info.fingerprint:
            live_spec = ToolSpec(runs_at="host", name=tool_permission_name(self.server, self.tool),
                                 schema=info.input_schema, description=info.description,
                                 execute=self.call, plugin=ctx.tool.plugin)
            checked, invalid = ctx.session.check_arguments(live_spec, args,
                                                           inside_capability=True,
                                                           call_id=ctx.call.id)
            if invalid is not None:
                return invalid
            assert checked is not None
            args = checked
        if (self.approved_read_only and not info.read_only) or \
                (info.destructive and not self.approved_destructive):
            return self._refuse(f'MCP tool "{self.tool}" changed its safety hints after '
                                "approval; nothing was called; call it again")
        refused = self.recheck(ctx, connecting=False)
        if refused is not None:
            return refused
        return args


def plan_of(spec: ToolSpec) -> McpPlan | None:
    """The plan behind an MCP target's spec (its execute is a bound plan method)."""
    owner = getattr(spec.execute, "__self__", None)
    return owner if isinstance(owner, McpPlan) else None


__all__ = ["McpPlan", "plan_of", "resolve"]
