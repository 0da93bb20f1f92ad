"""Test-only plugins for the core's pipeline tests: tools that record every execution."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from typing import Any

from callgate import PermissionSubject, ToolError, ToolSpec, hookimpl
from callgate_commandline import COMMAND

BASH_SCHEMA = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "minLength": 1},
        "description": {"type": "string", "maxLength": 200},
        "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 600000},
        "run_in_background": {"type": "boolean"},
    },
    "required": ["command"],
    "additionalProperties": False,
}

ITEMS_SCHEMA = {
    "type": "object",
    "properties": {
        "items": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "object"},
        "path": {"type": "string"},
    },
    "additionalProperties": False,
}


class Recorder:
    """A plugin whose tools append every execution to ``self.executed``.

    ``bash`` here is a stand-in with the real schema that never starts a
    process unless asked to (``spawn:`` prefix), so tests can prove that an
    invalid call never reached execution.
    """

    def __init__(self, name: str = "recorder") -> None:
        self.__name__ = name
        self.executed: list[tuple[str, Any]] = []
        self.spawned: list[int] = []

    def _rec(self, name: str):
        def run(ctx: Any, args: dict[str, Any]) -> str:
            self.executed.append((name, args))
            return f"{name} ran"
        return run

    def _bash(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(("bash", args))
        command = args["command"]
        if command.startswith("spawn:"):
            proc = subprocess.Popen(["sh", "-c", command[6:]], start_new_session=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            self.spawned.append(proc.pid)
            jobs = ctx.session.__dict__.setdefault("_test_jobs", [])
            jobs.append(proc)
            return f"started {proc.pid}"
        return f"would run: {command}"

    async def _sleep(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(("sleep", args))
        await asyncio.sleep(args.get("seconds", 0.2))
        return "slept"

    def _sync_sleep(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(("sync_sleep", args))
        time.sleep(args.get("seconds", 0.2))
        return "slept"

    def _boom(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(("boom", args))
        raise RuntimeError("kaboom")

    def _fail(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(("fail", args))
        raise ToolError("not_found", "thing not found: x", "THING_NOT_FOUND")

    def _big(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(("big", args))
        return args.get("char", "x") * args.get("n", 100_000)

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        sleep_schema = {"type": "object", "properties": {"seconds": {"type": "number"}},
                        "additionalProperties": False}
        big_schema = {"type": "object", "properties": {"n": {"type": "integer"},
                                                        "char": {"type": "string"}},
                      "additionalProperties": False}
        registry.add_subject_kind(COMMAND)  # as the shell plugin does
        registry.add(ToolSpec(name="bash", description="Run a command (test stand-in).",
                              schema=BASH_SCHEMA, execute=self._bash, visibility="surface",
                              permission_subject=PermissionSubject("command", ("command",)),
                              groups=("Bash",)))
        registry.add(ToolSpec(name="items", description="Takes items.", schema=ITEMS_SCHEMA,
                              read_only=True, execute=self._rec("items"),
                              visibility="surface"))
        registry.add(ToolSpec(name="items_alias", description="Old name of items.",
                              schema={"type": "object", "properties": {
                                  "things": {"type": "array", "items": {"type": "string"}}},
                                  "required": ["things"], "additionalProperties": False},
                              read_only=True, visibility="alias", alias_of="items",
                              alias_args=lambda a: {"items": a["things"]}))
        registry.add(ToolSpec(name="sleep", description="Sleep (async).", schema=sleep_schema,
                              read_only=True, execute=self._sleep))
        registry.add(ToolSpec(name="sync_sleep", description="Sleep (sync).",
                              schema=sleep_schema, read_only=True, execute=self._sync_sleep))
        registry.add(ToolSpec(name="write_sleep", description="A writer that sleeps.",
                              schema=sleep_schema, execute=self._sync_sleep))
        registry.add(ToolSpec(name="boom", description="Raises.", schema={"type": "object"},
                              read_only=True, execute=self._boom))
        registry.add(ToolSpec(name="fail", description="Fails.", schema={"type": "object"},
                              read_only=True, execute=self._fail))
        registry.add(ToolSpec(name="big", description="Big output.", schema=big_schema,
                              read_only=True, execute=self._big))
        registry.add(ToolSpec(name="broken", description="Schema does not compile.",
                              schema={"type": "object", "properties": {"x": {"type": 5}}},
                              read_only=True, execute=self._rec("broken")))

    @hookimpl
    def callgate_session_end(self, session: Any) -> None:
        for proc in session.__dict__.get("_test_jobs", []):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
