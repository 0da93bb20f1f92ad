"""What ``list``, ``search`` and ``inspect`` show: only what is callable (capability.md §1, §4).

Nothing here starts a process, touches the network or writes a file: MCP
servers are described from their live connection when there is one, else from
the schema cache. Every answer is one compact JSON object with sorted keys.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs
from callgate import ToolResult, ToolSpec
from callgate.schema import canonical_schema, short_fingerprint
from callgate.suggest import meanings_of

from . import _policy
from ._cache import McpToolInfo
from ._ids import TOOL_RESULT_ID, CapabilityId, did_you_mean
from ._keys import MCP_SERVERS
from ._names import connect_permission_name, tool_permission_name
from ._servers import NOT_INSTALLED, McpServers, mcp_installed
from ._tool_result import SPEC as TOOL_RESULT_SPEC
from .tools.specs import PROXY_NAME

SERVER_DIRECTORY_LIMIT = 16 * 1024
DESCRIPTION_CHARS = 200
SUMMARY_CHARS = 120


def compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def unavailable(capability_id: str, message: str) -> ToolResult:
    """The unexecuted ``unavailable`` result for an id that names nothing callable."""
    return ToolResult.failure("unavailable", f"capability unavailable: {message}",
                              f"unavailable:{capability_id}", {"executed": False})


@attrs.frozen
class Candidate:
    """One search candidate."""

    id: str
    kind: str
    name: str
    description: str
    read_only: bool
    argument_names: list[str]
    extra: dict[str, Any] = attrs.field(factory=dict)

    def hit(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "name": self.name,
                "description": self.description[:DESCRIPTION_CHARS], "read_only": self.read_only,
                "argument_names": self.argument_names, **self.extra}


class Inventory:
    """The callable capabilities of one session, as seen right now."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.host = session.host
        self.mcp = mcp_installed()

    @property
    def servers(self) -> McpServers:
        return self.session.extension(MCP_SERVERS)

    # --- tools ------------------------------------------------------------------------

    def tool_spec(self, name: str) -> ToolSpec | None:
        if name == PROXY_NAME:
            return None
        return self.session.available_tools().get(name)

    def tool_denied(self, spec: ToolSpec) -> str | None:
        return _policy.exact_deny(self.host, self.session, spec.permission_name, spec)

    def hidden_tools(self) -> tuple[list[ToolSpec], int]:
        """Hidden, non-alias tools of this session (minus denied ones), and how many denied."""
        shown, denied = [], 0
        for name, spec in sorted(self.session.available_tools().items()):
            if name == PROXY_NAME or spec.visibility == "alias" or spec.alias_of:
                continue
            if self.session.is_visible(name) and name not in self.session.shown_hidden():
                continue  # a tool shown by `show` (a deferred one) is still searched
            if self.tool_denied(spec):
                denied += 1
                continue
            shown.append(spec)
        return shown, denied

    def unknown_tool(self, cap: CapabilityId) -> ToolResult:
        if cap.name == PROXY_NAME:
            return unavailable(cap.text, "use_capability cannot be reached through itself")
        absent = self.session.why_absent(cap.name)
        if absent is not None and absent.error is not None:
            # the verdict a direct call gets: a profile's refusal as it is; unavailable (a
            # missing hook) in the same words, under the capability id
            if absent.error.kind != "unavailable":
                return absent
            return unavailable(cap.text, absent.error.message)
        why = f'tool "{cap.name}" is not registered in this session'
        pool = [n for n in self.session.available_tools() if n != PROXY_NAME]
        meanings = meanings_of(self.host.registry.tools())
        return unavailable(cap.text, why + did_you_mean(cap.name, pool, "tool:{}", meanings))

    # --- servers ---------------------------------------------------------------------

    def server_denied(self, name: str) -> str | None:
        """The connect deny rule, for a server that is not connected."""
        if self.servers.live(name) is not None:
            return None
        return _policy.exact_deny(self.host, self.session, connect_permission_name(name))

    def shown_servers(self) -> tuple[list[str], int, int]:
        """Enabled, not-denied servers, and how many were disabled / denied."""
        if not self.mcp:
            return [], 0, 0
        shown, disabled, denied = [], 0, 0
        for name in self.servers.names():
            config = self.servers.config(name)
            assert config is not None
            if not config.enabled:
                disabled += 1
            elif self.server_denied(name):
                denied += 1
            else:
                shown.append(name)
        return shown, disabled, denied

    def check_server(self, cap_id: str, server: str, *, for_call: bool = False
                     ) -> ToolResult | None:
        """``None`` when ``server`` may be used, else the ``unavailable`` result."""
        if not self.mcp:
            return unavailable(cap_id, NOT_INSTALLED)
        config = self.servers.config(server)
        if config is None:
            pool = [n for n in self.servers.names()
                    if (c := self.servers.config(n)) is not None and c.enabled]
            return unavailable(cap_id, f'MCP server "{server}" is not configured'
                               + did_you_mean(server, pool, "mcp-server:{}"))
        if not config.enabled:
            return unavailable(cap_id, f'MCP server "{server}" is disabled (enabled = false)')
        if not for_call and (rule := self.server_denied(server)):
            return unavailable(cap_id, f'MCP server "{server}" may not be started: rule '
                               f"{rule} denies it")
        return None

    def mcp_tools(self, server: str) -> tuple[str, list[McpToolInfo]]:
        """The server's tools (live, else cached) minus those an exact deny rule names."""
        source, tools = self.servers.known(server)
        return source, [t for t in tools if not _policy.exact_deny(
            self.host, self.session, tool_permission_name(server, t.name))]

    # --- list --------------------------------------------------------------------------

    def list(self) -> str:
        tools, tools_denied = self.hidden_tools()
        names, disabled, servers_denied = self.shown_servers()
        servers = []
        for name in names:
            config = self.servers.config(name)
            assert config is not None
            source, known = self.servers.known(name)
            servers.append({"id": f"mcp-server:{name}", "status": self.servers.status(name),
                            "auto_start": config.auto_start,
                            "cached_tools": len(known) if source != "none" else None})
        return compact({
            "servers": servers,
            "tools": [{"id": f"tool:{s.name}", "read_only": s.contract_read_only}
                      for s in tools],
            "session": [TOOL_RESULT_ID],
            "omitted": {"disabled": disabled, "denied": tools_denied + servers_denied},
        })

    # --- search ------------------------------------------------------------------------

    def candidates(self) -> list[Candidate]:
        out: list[Candidate] = []
        tools, _ = self.hidden_tools()
        for spec in tools:
            out.append(Candidate(f"tool:{spec.name}", "tool", spec.name, spec.description,
                                 spec.contract_read_only, _argument_names(spec.schema)))
        names, _, _ = self.shown_servers()
        for name in names:
            status = self.servers.status(name)
            source, known = self.mcp_tools(name)
            out.append(Candidate(
                f"mcp-server:{name}", "mcp-server", name,
                f"MCP server {name}: call it to connect and list its tools", False, [],
                {"status": status, "source": source}))
            for info in known:
                out.append(Candidate(
                    f"mcp-tool:{name}/{info.name}", "mcp-tool", info.name, info.description,
                    info.read_only, info.argument_names,
                    {"destructive": info.destructive, "status": status, "source": source}))
        out.append(Candidate(TOOL_RESULT_ID, "session", "tool_result",
                             TOOL_RESULT_SPEC.description, True,
                             _argument_names(TOOL_RESULT_SPEC.schema)))
        return out

    def search(self, query: str, limit: int) -> str:
        words = sorted(set(re.findall(r"\w+", query.lower())))
        scored: list[tuple[int, str, Candidate]] = []
        for cand in self.candidates():
            name = cand.name.lower()
            rest = " ".join([cand.description.lower(), *(a.lower() for a in cand.argument_names)])
            score = 0
            for word in words:
                if word in name:
                    score += 3
                if word in rest:
                    score += 1
            if score:
                scored.append((score, cand.id, cand))
        scored.sort(key=lambda item: (-item[0], item[1]))
        hits = [c.hit() for _, _, c in scored[:limit]]
        if not hits:
            return compact({"results": [], "hint": "nothing matched; try other words, or "
                            "action=list for the whole inventory"})
        return compact({"results": hits})

    # --- inspect -----------------------------------------------------------------------

    def inspect_tool(self, cap: CapabilityId) -> ToolResult:
        spec = self.tool_spec(cap.name)
        if spec is None:
            return self.unknown_tool(cap)
        if rule := self.tool_denied(spec):
            return unavailable(cap.text, f'tool "{cap.name}" is denied by rule {rule}')
        return ToolResult.ok(compact(self._tool_doc(cap.text, "tool", spec)))

    def inspect_tool_result(self) -> ToolResult:
        return ToolResult.ok(compact(self._tool_doc(TOOL_RESULT_ID, "session",
                                                    TOOL_RESULT_SPEC)))

    def _tool_doc(self, cap_id: str, kind: str, spec: ToolSpec) -> dict[str, Any]:
        schema = canonical_schema(spec.schema)
        return {"id": cap_id, "kind": kind, "name": spec.name, "description": spec.description,
                "read_only": spec.contract_read_only, "input_schema": schema,
                "schema_fingerprint": short_fingerprint(spec.schema),
                "call_example": call_example(cap_id, schema), "network_call": False}

    def inspect_mcp_tool(self, cap: CapabilityId) -> ToolResult:
        server = cap.server or ""
        refused = self.check_server(cap.text, server)
        if refused is not None:
            return refused
        permission = tool_permission_name(server, cap.name)
        if rule := _policy.exact_deny(self.host, self.session, permission):
            return unavailable(cap.text, f'MCP tool "{cap.name}" on "{server}" is denied by '
                               f"rule {rule}")
        source, tools = self.servers.known(server)
        found = next((t for t in tools if t.name == cap.name), None)
        if found is None:
            return self.unknown_mcp_tool(cap, source, tools)
        doc: dict[str, Any] = {
            "id": cap.text, "kind": "mcp-tool", "name": found.name, "server": server,
            "description": found.description, "read_only": found.read_only,
            "destructive": found.destructive, "permission_name": permission,
            "source": source, "network_call": False,
            "input_schema": found.input_schema, "schema_fingerprint": found.fingerprint,
        }
        error = found.schema_error(self.host)
        if error is not None:
            doc["schema_error"] = error
            doc["call_example"] = call_example(cap.text, {})
        else:
            doc["input_schema"] = canonical_schema(found.input_schema)
            doc["call_example"] = call_example(cap.text, doc["input_schema"])
        return ToolResult.ok(compact(doc))

    def unknown_mcp_tool(self, cap: CapabilityId, source: str,
                         tools: list[McpToolInfo]) -> ToolResult:
        server = cap.server or ""
        if source == "none":
            return unavailable(cap.text, f'MCP tool "{cap.name}" on "{server}" is not known '
                               f"yet; call mcp-server:{server} first")
        hint = did_you_mean(cap.name, [t.name for t in tools], f"mcp-tool:{server}/{{}}")
        where = "" if source == "live" else (f" (per its cached tool list; call "
                                             f"mcp-server:{server} to refresh it)")
        return unavailable(cap.text, f'MCP tool "{cap.name}" is not offered by server '
                           f'"{server}"{where}{hint}')

    def inspect_server(self, cap: CapabilityId) -> ToolResult:
        refused = self.check_server(cap.text, cap.name)
        if refused is not None:
            return refused
        return ToolResult.ok(compact(self.server_directory(cap.name)))

    def server_directory(self, server: str) -> dict[str, Any]:
        """Inspect's server form: status, source and a bounded tool directory."""
        source, tools = self.mcp_tools(server)
        doc: dict[str, Any] = {
            "id": f"mcp-server:{server}", "status": self.servers.status(server),
            "source": source, "permission_name": connect_permission_name(server),
            "network_call": False,
            "tools": [{"id": f"mcp-tool:{server}/{t.name}", "read_only": t.read_only,
                       "destructive": t.destructive, "summary": _summary(t.description)}
                      for t in tools],
        }
        if source == "none":
            doc["hint"] = f"call mcp-server:{server} to connect and list its tools"
        if len(compact(doc).encode()) > SERVER_DIRECTORY_LIMIT:
            for entry in doc["tools"]:
                entry.pop("summary", None)
            kept = list(doc["tools"])
            while kept and len(compact(doc).encode()) > SERVER_DIRECTORY_LIMIT:
                kept.pop()
                doc["tools"] = kept
                doc["more"] = len(tools) - len(kept)
        return doc


def _argument_names(schema: Any) -> list[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return sorted(props) if isinstance(props, dict) else []


def _summary(description: str) -> str:
    first = description.strip().splitlines()[0] if description.strip() else ""
    return first[:SUMMARY_CHARS]


_PLACEHOLDERS: dict[str, Any] = {"string": "<string>", "integer": 0, "number": 0,
                                 "boolean": False, "array": [], "object": {}, "null": None}


def placeholder(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return "<value>"
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind in _PLACEHOLDERS:
        return _PLACEHOLDERS[kind]
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    return "<value>"


def call_example(cap_id: str, schema: Any) -> dict[str, Any]:
    """A complete ``use_capability`` call with a typed placeholder per required property."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    required = schema.get("required") if isinstance(schema, dict) else None
    arguments = {}
    if isinstance(required, list):
        for name in sorted(r for r in required if isinstance(r, str)):
            sub = props.get(name) if isinstance(props, dict) else None
            arguments[name] = placeholder(sub)
    return {"action": "call", "capability_id": cap_id, "arguments": arguments}
