"""Test-only plugins and helpers for the capability tests.

``ToolsPlugin`` registers a few small in-process tools (a hidden read-only
``grep``, a hidden ``repeat``, a surface ``write_file``) so the ``tool:`` ids
can be exercised without depending on the real file/search plugins.
``Approver`` is an integrator approver that records what it was asked.
MCP servers are real stdio children: the SDK fixture server, ``mcp-server-time``
and ``mcp-server-git``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_capability
import psutil
from callgate import Decision, ToolSpec, hookimpl

FIXTURE = str(Path(__file__).resolve().parents[2] / "fixtures" / "mcp_fixture_server.py")
MCP_MARKERS = ("mcp_fixture_server.py", "mcp_server_time", "mcp_server_git")
PROVIDERS = (None, "openai-chat", "openai-responses", "anthropic", "gemini", "mcp")


class ToolsPlugin:
    """Small in-process tools: hidden ``grep`` and ``repeat``, surface ``write_file``."""

    __name__ = "captest_tools"

    def __init__(self) -> None:
        self.ran: list[tuple[str, Any]] = []

    def _grep(self, ctx: Any, args: dict[str, Any]) -> str:
        self.ran.append(("grep", args))
        hits = []
        root = Path(ctx.workspace.root)
        for path in sorted(root.rglob("*")):
            if path.is_file():
                for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                    if args["pattern"] in line:
                        hits.append(f"{path.relative_to(root)}:{n}:{line}")
        return "\n".join(hits) or "no matches"

    def _repeat(self, ctx: Any, args: dict[str, Any]) -> str:
        self.ran.append(("repeat", args))
        return args["text"] * args["times"]

    def _write(self, ctx: Any, args: dict[str, Any]) -> str:
        self.ran.append(("write_file", args))
        target = Path(ctx.workspace.root) / args["path"]
        target.write_text(args["content"])
        return f"wrote {args['path']}"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(
            name="grep", description="Search file contents for a literal pattern.",
            schema={"type": "object", "properties": {"pattern": {"type": "string",
                                                                 "minLength": 1}},
                    "required": ["pattern"], "additionalProperties": False},
            execute=self._grep, read_only=True))
        registry.add(ToolSpec(
            name="repeat", description="Return text repeated a number of times.",
            schema={"type": "object", "properties": {
                "text": {"type": "string"}, "times": {"type": "integer", "minimum": 0}},
                "required": ["text", "times"], "additionalProperties": False},
            execute=self._repeat, read_only=True))
        registry.add(ToolSpec(
            name="write_file", description="Write a file.", visibility="surface",
            surface_order=70,  # where the files plugin's write_file sits
            schema={"type": "object", "properties": {
                "path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"], "additionalProperties": False},
            execute=self._write, read_only=False))


class Approver:
    """An approver (``callgate_ask_permission``) that records each question."""

    __name__ = "captest_approver"

    def __init__(self, allow: bool = True,
                 on_ask: Callable[[Any, Any], None] | None = None) -> None:
        self.allow = allow
        self.on_ask = on_ask
        self.asked: list[str] = []

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any,
                                preview: Any) -> Decision:
        self.asked.append(call.name)
        if self.on_ask is not None:
            self.on_ask(call, session)
        return Decision("allow" if self.allow else "deny", reason="the test approver said so")


# --- servers ------------------------------------------------------------------------------


def fixture_server(tmp: Path, *extra: str, **table: Any) -> dict[str, Any]:
    """A ``[mcp_servers.fixture]`` table; ``tmp/calls.jsonl`` records every tools/call."""
    return {"command": sys.executable,
            "args": [FIXTURE, "--calls", str(tmp / "calls.jsonl"), *extra], **table}


def time_server(**table: Any) -> dict[str, Any]:
    return {"command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"], **table}


def git_server(repo: Path, **table: Any) -> dict[str, Any]:
    return {"command": sys.executable,
            "args": ["-m", "mcp_server_git", "--repository", str(repo)], **table}


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    for cmd in (["git", "init", "-q", "-b", "main"],
                ["git", "config", "user.email", "t@example.invalid"],
                ["git", "config", "user.name", "Test"]):
        subprocess.run(cmd, cwd=path, check=True, env=env)
    (path / "a.txt").write_text("one\n")
    subprocess.run(["git", "add", "a.txt"], cwd=path, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "first"], cwd=path, check=True, env=env)
    return path


def config(tmp: Path, servers: dict[str, Any] | None = None, **tables: Any) -> dict[str, Any]:
    """A config with a private schema cache under ``tmp``."""
    out: dict[str, Any] = {"capability": {"cache_dir": str(tmp / "cache")}}
    if servers:
        out["mcp_servers"] = servers
    out.update(tables)
    return out


def calls_of(tmp: Path) -> list[dict[str, Any]]:
    path = tmp / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- sessions --------------------------------------------------------------------------------


def boot(callgate_session: Any, tmp: Path, servers: dict[str, Any] | None = None, *,
         plugins: tuple[Any, ...] = (), surface: str = "lean", **kwargs: Any) -> Any:
    """A session with the capability plugin, the test tools and ``plugins``."""
    cfg = kwargs.pop("config", None) or config(tmp, servers, **kwargs.pop("tables", {}))
    return callgate_session(plugins=[callgate_capability, ToolsPlugin(), *plugins],
                            config=cfg, surface=surface, **kwargs)


def uc(s: Any, call_id: str | None = None, **args: Any) -> Any:
    """One ``use_capability`` call."""
    if call_id is None:
        return s.call("use_capability", args)
    [result] = s.run({"id": call_id, "name": "use_capability", "arguments": args})
    return result


def doc(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.text
    return json.loads(result.text)


# --- processes ---------------------------------------------------------------------------------


def mcp_children() -> dict[int, str]:
    """MCP server processes below this test process, by pid."""
    out = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            cmd = " ".join(proc.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        if any(m in cmd for m in MCP_MARKERS):
            out[proc.pid] = cmd
    return out


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False
