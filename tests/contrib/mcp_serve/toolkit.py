"""Test-only tools for the ``callgate serve`` tests, so they do not wait on the built-in plugins.

Each tool is small but real: ``peek`` reads through the observed-file API,
``swap`` is a structured mutation gated by the host (observation, lease), ``spawn``
starts a process the session must kill at close (a stand-in for a shell job).
`Toolkit` records what happened so tests can assert on it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import anyio
from callgate import ToolContext, ToolResult, ToolSpec, hookimpl
from callgate.results import ImageBlock

# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082")


def child_env(**extra: str) -> dict[str, str]:
    """What a served subprocess must inherit beyond the MCP client's minimal environment:
    the test's private ``$CALLGATE_HOME`` (its session store) and ``$CALLGATE_CONFIG_HOME``,
    never the user's real ones."""
    return {"CALLGATE_HOME": os.environ["CALLGATE_HOME"],
            "CALLGATE_CONFIG_HOME": os.environ["CALLGATE_CONFIG_HOME"], **extra}


def _object(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": False}


class Toolkit:
    """An in-process plugin; one instance per test host."""

    name = "toolkit"

    def __init__(self, marker: str | None = None) -> None:
        self.marker = marker  # a file written at session end (for subprocess tests)
        self.events: list[tuple[str, Any]] = []
        self.spans: list[tuple[str, float, float]] = []
        self.pids: list[int] = []
        self.cancelled_seen = threading.Event()
        self.lock = threading.Lock()

    # --- tools -------------------------------------------------------------------------

    def peek(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        return ctx.files.read_text(args["path"], observe=True)  # it shows the model the file

    def swap(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        gated = ctx.gated["path"]
        with open(gated.path, encoding="utf-8") as fh:
            text = fh.read()
        if args["old"] not in text:
            return ToolResult.failure("tool_error", f"SWAP_NO_MATCH: {args['old']!r} is not in "
                                      f"{gated.display}; read it again", "SWAP_NO_MATCH")
        ctx.files.write_text(args["path"], text.replace(args["old"], args["new"], 1))
        return f"swapped in {gated.display}"

    def swap_preview(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        return f"- {args['old']}\n+ {args['new']}"

    def boom(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        raise RuntimeError("the toolkit exploded on purpose")

    async def snooze(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        start = time.monotonic()
        deadline = start + args["seconds"]
        while time.monotonic() < deadline:
            if ctx.cancelled.is_set():
                self.cancelled_seen.set()
                break
            await anyio.sleep(0.01)
        with self.lock:
            self.spans.append((ctx.call.id, start, time.monotonic()))
        return f"slept {args['seconds']}s"

    def spawn(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                start_new_session=True, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with self.lock:
            self.pids.append(proc.pid)
        if self.marker:
            with open(self.marker + ".pids", "a", encoding="utf-8") as fh:
                fh.write(f"{proc.pid}\n")
        return f"started pid {proc.pid}"

    def picture(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        return ToolResult(content=[ImageBlock("image/png", PNG)])

    def bulk(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        return f"{ctx.call.id}\n" + "z" * args["chars"]

    def nudge(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        ctx.notify(f"note from nudge: {args['text']}")
        return "queued"

    # --- hooks -------------------------------------------------------------------------

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        path = {"type": "string", "minLength": 1}
        add = registry.add
        add(ToolSpec(name="peek", description="Read a text file of the workspace.",
                     schema=_object({"path": path}, ["path"]), read_only=True,
                     visibility="surface", execute=self.peek))
        add(ToolSpec(name="swap", description="Replace the first occurrence of old by new in "
                     "a file read earlier.",
                     schema=_object({"path": path, "old": {"type": "string", "minLength": 1},
                                     "new": {"type": "string"}}, ["path", "old", "new"]),
                     mutates_paths=("path",), visibility="surface", execute=self.swap,
                     preview=self.swap_preview))
        add(ToolSpec(name="boom", description="Always raises.", schema=_object({}, []),
                     read_only=True, visibility="surface", execute=self.boom))
        add(ToolSpec(name="snooze", description="Sleep, cooperatively cancellable.",
                     schema=_object({"seconds": {"type": "number", "minimum": 0,
                                                 "maximum": 60}}, ["seconds"]),
                     read_only=True, visibility="surface", execute=self.snooze))
        add(ToolSpec(name="spawn", description="Start a long-running child process.",
                     schema=_object({}, []), destructive=False, visibility="surface",
                     execute=self.spawn))
        add(ToolSpec(name="picture", description="Return a tiny PNG.", schema=_object({}, []),
                     read_only=True, visibility="surface", execute=self.picture))
        add(ToolSpec(name="bulk", description="Return a text of `chars` characters.",
                     schema=_object({"chars": {"type": "integer", "minimum": 0,
                                               "maximum": 1_000_000}}, ["chars"]),
                     read_only=True, visibility="surface", execute=self.bulk))
        add(ToolSpec(name="nudge", description="Queue a notice for the next result.",
                     schema=_object({"text": {"type": "string"}}, ["text"]), read_only=True,
                     visibility="surface", execute=self.nudge))

    @hookimpl
    def callgate_session_start(self, session: Any) -> None:
        self.events.append(("start", session.id))

    @hookimpl
    def callgate_session_end(self, session: Any) -> None:
        for pid in self.pids:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.events.append(("end", session.id))
        if self.marker:
            with open(self.marker, "w", encoding="utf-8") as fh:
                fh.write(session.id)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (zombies count as dead)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
