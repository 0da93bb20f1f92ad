"""The MCP servers of one session: settings, status, live tools, connects and calls.

``session.extension(MCP_SERVERS)`` is this object. Its settings start from
``[mcp_servers]`` and may change at run time (``set_enabled``,
``reconfigure``): the proxy re-reads them right before every connect and call.
The server processes (one `McpRuntime`) belong to the session's family
(``session.shared``): a subagent's child session and a planner/executor pair use
the connections of the session that opened them, one process per server, and
the processes stop when the family's last session closes. Sessions the
integrator opened separately never share them. The SDK is imported only when a
server is used.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from callgate import Decision, ToolError, ToolResult, process
from callgate.results import ImageBlock, TextBlock

from . import _policy
from ._cache import CachedServer, McpToolInfo, SchemaCache
from .config import MissingVariable, ServerConfig, cache_dir, server_config

if TYPE_CHECKING:
    from ._mcp_client import Launch, McpRuntime

log = logging.getLogger("callgate.capability")

#: the family's MCP runtime in ``session.shared``
RUNTIME_KEY = "callgate_capability.mcp_runtime"
NOT_INSTALLED = "MCP support is not installed (callgate-capability[mcp])"


def mcp_installed() -> bool:
    """Whether the official ``mcp`` SDK can be imported (the ``[mcp]`` extra)."""
    try:
        import mcp  # noqa: F401
        from mcp import ClientSession, stdio_client  # noqa: F401
    except ImportError:
        return False
    return True


def prepare_server(session: Any, config: ServerConfig, env: dict[str, str]
                   ) -> process.Prepared:
    """A server's program through the core's door: the SDK's few variables plus ``env``
    (no other host variable), tied to the session family's lifetime. A server of the
    user's config is the user's own program and runs outside the sandbox; one an untrusted
    workspace config defines runs the workspace's choice of program, so only inside the
    sandbox (refused where none works)."""
    untrusted = config.from_untrusted_workspace
    try:
        return process.prepare(
            session, [config.command, *config.args], workspace="write", network=True,
            sandbox="required" if untrusted else "off",
            because="an untrusted workspace config defines it (define it in your user config, "
                    "or trust the workspace with [trust] workspaces, to run it unconfined)",
            env=process.Environment(inherit="minimal", set=env), cwd=config.cwd,
            purpose=f'MCP server "{config.name}"', lifetime="family")
    except FileNotFoundError:
        raise _start_error(config.name, f'command "{config.command}" was not found',
                           "(no stderr output)") from None
    except PermissionError:
        raise _start_error(config.name, f'command "{config.command}" could not be run '
                           "(permission denied)", "(no stderr output)") from None




class McpServers:
    """One session's view of its MCP servers (``session.extension(MCP_SERVERS)``)."""

    def __init__(self, session: Any) -> None:
        self._session = session
        host = session.host
        root = session.workspace.root
        self._root = root
        tables = host.config("mcp_servers") or {}
        self._configs: dict[str, ServerConfig] = {
            name: server_config(name, table, root, from_untrusted_workspace=(
                host.from_untrusted_workspace("mcp_servers", name)))
            for name, table in sorted(tables.items())}
        self.cache = SchemaCache(cache_dir(host.config("capability") or {}))
        self._runtime: McpRuntime | None = None
        self._live_memo: dict[str, tuple[Any, dict[str, McpToolInfo]]] = {}
        self._lock = threading.Lock()
        self._closed = False

    # --- settings (the integrator may change them while the session runs) -----------

    def names(self) -> list[str]:
        return sorted(self._configs)

    def config(self, name: str) -> ServerConfig | None:
        return self._configs.get(name)

    def connect_decision(self, name: str, start: str) -> Decision | None:
        """What a call that starts server ``name`` needs, judged as its connect is
        (``start`` says what the call does: "expanding a prompt of MCP server s starts
        it"): a ``deny``, ``ask`` or ``allow`` `Decision`, or ``None`` when only the
        ``allow`` mode allows it (then the call's own permission decides). ``None`` for a
        server not configured. For plugins whose own tool starts a server."""
        config = self._configs.get(name)
        if config is None:
            return None
        return _policy.connect_check(self._session.host, self._session, config, start)

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Enable or disable a configured server from now on (running calls re-check)."""
        self._configs[name] = attrs.evolve(self._configs[name], enabled=bool(enabled))

    def reconfigure(self, name: str, **changes: Any) -> ServerConfig:
        """Change a server's settings (``command``, ``args``, ``env``, ``cwd``, ...)."""
        current = self._configs[name]
        if "cwd" in changes:
            changes["cwd"] = os.path.normpath(os.path.join(self._root, changes["cwd"] or ""))
        self._configs[name] = attrs.evolve(current, **changes)
        return self._configs[name]

    # --- what is known -----------------------------------------------------------------

    def status(self, name: str) -> str:
        """``configured`` | ``starting`` | ``connected`` | ``failed``."""
        runtime = self._current()
        conn = runtime.connection(name) if runtime is not None else None
        if conn is None or conn.status == "stopped":
            return "configured"
        if conn.status == "connected" and not conn.alive:
            return "failed"
        return conn.status

    def live(self, name: str) -> dict[str, McpToolInfo] | None:
        """The live tools of a connected server whose identity still matches, by name."""
        config = self._configs.get(name)
        runtime = self._current()
        conn = runtime.connection(name) if runtime is not None else None
        if config is None or conn is None or not conn.alive:
            return None
        if conn.launch.identity != config.identity:
            return None
        memo = self._live_memo.get(name)
        if memo is None or memo[0] is not conn:
            memo = (conn, {t.name: _info(t) for t in conn.tools})
            self._live_memo[name] = memo
        return dict(memo[1])

    def cached(self, name: str) -> CachedServer | None:
        config = self._configs.get(name)
        return self.cache.load(config.identity) if config is not None else None

    def known(self, name: str) -> tuple[str, list[McpToolInfo]]:
        """``("live"|"cache"|"none", tools)``: live beats cache."""
        live = self.live(name)
        if live is not None:
            return "live", sorted(live.values(), key=lambda t: t.name)
        cached = self.cached(name)
        if cached is not None:
            return "cache", sorted(cached.tools, key=lambda t: t.name)
        return "none", []

    def pid(self, name: str) -> int | None:
        runtime = self._current()
        conn = runtime.connection(name) if runtime is not None else None
        return conn.pid if conn is not None and conn.alive else None

    # --- connecting and calling (blocking; called from worker threads) ---------------

    def _current(self) -> McpRuntime | None:
        """The family's runtime, if any member started one (nothing once closed)."""
        if self._runtime is not None or self._closed:
            return self._runtime
        return self._session.shared.peek(RUNTIME_KEY)  # type: ignore[no-any-return]

    def _ensure_runtime(self) -> McpRuntime:
        with self._lock:
            if self._closed:
                raise ToolError("cancelled", "the session is closing; nothing was started",
                                "cancelled", {"executed": False})
            if self._runtime is None:
                from ._mcp_client import McpRuntime

                try:
                    self._runtime = self._session.shared.get(
                        RUNTIME_KEY, McpRuntime, lambda runtime: runtime.close())
                except RuntimeError:
                    raise ToolError("cancelled", "the session is closing; nothing was "
                                    "started", "cancelled", {"executed": False}) from None
            return self._runtime

    def _launch(self, config: ServerConfig) -> Launch:
        from ._mcp_client import Launch

        try:
            env = config.expanded_env()
        except MissingVariable as exc:
            raise _start_error(config.name, str(exc), "(no stderr output)") from None
        if not os.path.isdir(config.cwd):
            raise _start_error(config.name, f'working directory "{config.cwd}" does not exist',
                               "(no stderr output)")
        import contextvars

        from ._relay import CallRelay, can_sample

        prepared = prepare_server(self._session, config, env)
        log_path = os.path.join(self._session.scratch_dir(), "mcp", f"{config.name}.stderr.log")
        # outside any call (a log line between calls): no call's context
        idle = CallRelay(self._session, config.name, contextvars.Context())
        return Launch(config.name, config.identity, config.command, tuple(config.args), env,
                      config.cwd, float(config.startup_timeout_s), log_path, prepared,
                      workspace=self._root, relay=idle, can_sample=can_sample(self._session))

    def connect(self, name: str, cancelled: threading.Event | None = None
                ) -> list[McpToolInfo]:
        """Start (or reuse) the server's child; returns its live tools. Writes the cache."""
        from ._mcp_client import Cancelled, NotConnected, StartFailure

        config = self._configs[name]
        launch = self._launch(config)
        runtime = self._ensure_runtime()
        try:
            conn = runtime.wait(runtime.submit(runtime.connect(launch)), cancelled)
        except StartFailure as exc:
            raise _start_error(name, exc.reason, exc.stderr) from None
        except Cancelled:
            raise ToolError("cancelled", f'cancelled while MCP server "{name}" was starting',
                            "cancelled") from None
        except NotConnected:
            raise ToolError("cancelled", "the session is closing; nothing was started",
                            "cancelled", {"executed": False}) from None
        tools = [_info(t) for t in conn.tools]
        try:
            self.cache.save(config.identity, name, conn.server_info, tools)
        except OSError as exc:
            log.warning("could not write the MCP schema cache for %s: %s", name, exc)
        return tools

    def call(self, name: str, tool: str, arguments: dict[str, Any],
             cancelled: threading.Event | None = None,
             progress: Callable[[float, float | None, str | None], None] | None = None
             ) -> ToolResult:
        """Send one ``tools/call`` (counted in ``remote_dispatches``) and shape its result.
        ``progress`` (the call's ``ctx.progress``) receives the child's progress reports.
        Blocking: from a worker thread (`call_async` from the session's event loop)."""
        timeout = float(self._configs[name].call_timeout_s)
        runtime, future = self._send(name, tool, arguments, timeout, cancelled, progress)
        try:
            answer = runtime.wait(future, cancelled)
        except Exception as exc:
            return _failed(name, tool, timeout, exc)
        return to_result(answer, _label(name, tool), _meta(name, tool))

    async def call_async(self, name: str, tool: str, arguments: dict[str, Any],
                         cancelled: threading.Event | None = None,
                         progress: Callable[[float, float | None, str | None], None] | None
                         = None) -> ToolResult:
        """`call` awaited on the session's event loop: the request goes to the MCP loop
        thread and its answer comes straight back (one wake-up each way, no worker
        thread in between)."""
        timeout = float(self._configs[name].call_timeout_s)
        runtime, future = self._send(name, tool, arguments, timeout, cancelled, progress)
        try:
            answer = await runtime.result(future, cancelled)
        except Exception as exc:
            return _failed(name, tool, timeout, exc)
        return to_result(answer, _label(name, tool), _meta(name, tool))

    def _send(self, name: str, tool: str, arguments: dict[str, Any], timeout: float,
              cancelled: threading.Event | None,
              progress: Callable[[float, float | None, str | None], None] | None
              ) -> tuple[McpRuntime, Any]:
        from ._relay import CallRelay

        runtime = self._ensure_runtime()
        relay = CallRelay(self._session, name)  # this thread's context: the call's
        future = runtime.submit(runtime.call(
            name, tool, arguments, timeout,
            on_send=lambda: self._session.count("remote_dispatches"), on_progress=progress,
            relay=relay, cancelled=cancelled))
        return runtime, future

    def start_in_background(self, name: str) -> None:
        """Connect without waiting (``auto_start``); a failure shows as status ``failed``."""
        config = self._configs[name]
        try:
            launch = self._launch(config)
            runtime = self._ensure_runtime()
        except ToolError as exc:
            log.warning("auto_start of MCP server %s: %s", name, exc.message)
            return
        future = runtime.submit(runtime.connect(launch))

        def saved(done: Any) -> None:
            if done.cancelled() or done.exception() is not None:
                return
            conn = done.result()
            try:
                self.cache.save(config.identity, name, conn.server_info,
                                [_info(t) for t in conn.tools])
            except OSError:
                pass

        future.add_done_callback(saved)

    def close(self) -> None:
        """This session stops using the servers (idempotent); the processes stop when the
        last session of its family closes (``session.shared``)."""
        with self._lock:
            self._closed = True
            self._runtime = None


def _start_error(name: str, reason: str, stderr: str) -> ToolError:
    return ToolError("tool_error", f'MCP server "{name}" failed to start: {reason}\n'
                     f"stderr (last lines):\n{stderr}", f"mcp_start_failed:{name}",
                     {"server": name})


def _failed(name: str, tool: str, timeout: float, exc: Exception) -> ToolResult:
    """A ``tools/call`` that got no answer, as its result."""
    from ._mcp_client import CallTimedOut, Cancelled, NotConnected, ServerGone, seconds

    label, meta = _label(name, tool), _meta(name, tool)
    if isinstance(exc, CallTimedOut):
        return ToolResult.failure(
            "timeout", f"{label} did not answer within {seconds(timeout)} s",
            "timeout", meta)
    if isinstance(exc, ServerGone):
        return ToolResult.failure(
            "tool_error", f'MCP server "{name}" failed during the call: {exc.reason}\n'
            f"stderr (last lines):\n{exc.stderr}", f"mcp_server_failed:{name}", meta)
    if isinstance(exc, NotConnected):
        return ToolResult.failure(
            "tool_error", f'MCP server "{name}" is not connected any more; call again to '
            "reconnect", f"mcp_server_failed:{name}", meta)
    if isinstance(exc, Cancelled):
        return ToolResult.failure("cancelled", f"{label} was cancelled", "cancelled", meta)
    return ToolResult.failure(
        "tool_error", f"{label} failed: {type(exc).__name__}: {exc}",
        f"mcp_error:{name}", meta)


def _label(name: str, tool: str) -> str:
    return f'MCP tool "{tool}" on "{name}"'


def _meta(name: str, tool: str) -> dict[str, Any]:
    return {"server": name, "mcp_tool": tool}


def _info(tool: Any) -> McpToolInfo:
    annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) \
        if tool.annotations is not None else {}
    return McpToolInfo(tool.name, tool.description or "", tool.input_schema, annotations)


#: the original MCP content rides along in ``meta`` up to this size (JSON characters), so
#: ``callgate serve`` can forward it block for block; larger answers keep the rendering only
MCP_CONTENT_META_MAX = 256 * 1024


def to_result(answer: Any, label: str, meta: Mapping[str, Any]) -> ToolResult:
    """An MCP ``CallToolResult`` as a callgate result (capability.md §5 "Results").

    Blocks keep their order: text and images as themselves, an embedded resource's text
    under a ``[resource uri mime]`` line, an image blob as an image, other blobs, resource
    links and audio as a line saying what they are. ``structuredContent`` is kept in
    ``meta["structured_content"]`` (and is the text when there is no content), and the
    original blocks in ``meta["mcp_content"]`` with the digest of the text they rendered
    to (``meta["mcp_text_sha256"]``, and its length ``meta["mcp_text_chars"]``), so an MCP
    server in front of callgate forwards them as they came unless the host changed the text
    on the way (then the blocks are the host's rendering, the data clipped or dropped).
    """
    blocks: list[TextBlock | ImageBlock] = []
    for block in answer.content or []:
        blocks += _blocks_of(block)
    extra: dict[str, Any] = {}
    structured = answer.structured_content
    if structured is not None:
        extra["structured_content"] = structured
        if not blocks:
            blocks.append(TextBlock(json.dumps(structured, separators=(",", ":"),
                                               ensure_ascii=False, sort_keys=True)))
    if answer.content:
        dumped = [b.model_dump(mode="json", by_alias=True, exclude_none=True)
                  for b in answer.content]
        if len(json.dumps(dumped)) <= MCP_CONTENT_META_MAX:
            extra["mcp_content"] = dumped
    texts = [b.text for b in blocks if isinstance(b, TextBlock)]
    if answer.is_error:
        text = "\n".join(texts)
        return ToolResult.failure("tool_error", f"{label} reported an error:\n{text}",
                                  f"mcp_tool_error:{meta.get('server')}/{meta.get('mcp_tool')}",
                                  {**meta, **extra})
    if not blocks:
        blocks = [TextBlock("")]
    result = ToolResult(content=blocks, meta={**dict(meta), **extra})
    if extra:  # the text as the answer made it, so serve can tell if the host changed it
        result.meta["mcp_text_sha256"] = hashlib.sha256(result.text.encode()).hexdigest()
        result.meta["mcp_text_chars"] = len(result.text)
    return result


def _blocks_of(block: Any) -> list[TextBlock | ImageBlock]:
    kind = getattr(block, "type", None)
    if kind == "text":
        return [TextBlock(block.text)]
    if kind == "image":
        try:
            return [ImageBlock(block.mime_type, base64.b64decode(block.data))]
        except (binascii.Error, ValueError):
            return [TextBlock(f"[image {block.mime_type}: undecodable data]")]
    if kind == "resource_link":
        line = "[resource link " + " ".join(
            x for x in (str(block.uri), block.name, block.mime_type) if x) + "]"
        return [TextBlock(f"{line} {block.description}" if block.description else line)]
    if kind == "resource":
        inner = block.resource
        uri, mime = str(inner.uri), getattr(inner, "mime_type", None)
        text = getattr(inner, "text", None)
        if text is not None:
            return [TextBlock(f"{_resource(uri, mime)}\n{text}")]
        blob = getattr(inner, "blob", None) or ""
        try:
            data = base64.b64decode(blob)
        except (binascii.Error, ValueError):
            return [TextBlock(f"{_resource(uri, mime)} (undecodable binary data)")]
        if mime and mime.startswith("image/"):
            return [TextBlock(_resource(uri, mime)), ImageBlock(mime, data)]
        return [TextBlock(f"{_resource(uri, mime)} ({len(data):,} bytes of binary data)")]
    if kind == "audio":
        try:
            size = len(base64.b64decode(block.data))
        except (binascii.Error, ValueError):
            size = 0
        return [TextBlock(f"[audio {block.mime_type}, {size:,} bytes]")]
    return []


def _resource(uri: str, mime: str | None) -> str:
    return f"[resource {uri} {mime}]" if mime else f"[resource {uri}]"
