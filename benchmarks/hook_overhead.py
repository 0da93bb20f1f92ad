"""Per-call cost of a Claude Code command hook (issue 33): a no-op PreToolUse hook vs no hook.

The same trivial call (``noop``, a read-only tool that returns at once) runs through
``session.run_batch`` in three hosts: without callgate-hooks' hooks, with one no-op command
hook (``true``: exit 0, no output) on PreToolUse, and with that hook on PreToolUse and
PostToolUse. A command hook is a program started per call, so a process spawn (``bash -c
true`` through the door) is the floor; the start of that same program alone is measured
beside it, and the overhead per call is the difference of medians measured in one run.

    uv run python benchmarks/hook_overhead.py [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
from callgate import Host, Registry, ToolCall, ToolSpec, hookimpl, process

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}},
          "additionalProperties": False}
NOOP_HOOK = [{"matcher": "noop", "hooks": [{"type": "command", "command": "true"}]}]


def noop(ctx: Any, args: dict[str, Any]) -> str:
    return "ok"


class Bench:
    __name__ = "bench"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        registry.add(ToolSpec(name="noop", description="Does nothing.", schema=SCHEMA,
                              execute=noop, read_only=True, blocking=False,
                              visibility="surface"))


def _host(hooks: dict[str, Any]) -> Host:
    return Host.boot({"hooks": hooks, "sessions": {"record": "off"}},
                     plugins=[Bench()], entrypoints=["hooks"], surface="full",
                     user_config=False)


async def _per_call(host: Host, workspace: str, calls: int) -> list[float]:
    async with host.open_session(workspace) as session:
        for i in range(5):  # warm-up
            await session.run_batch([ToolCall(f"w{i}", "noop", {})])
        out = []
        for i in range(calls):
            started = time.perf_counter()
            [result] = await session.run_batch([ToolCall(f"c{i}", "noop", {})])
            out.append(time.perf_counter() - started)
            assert not result.is_error, result.text
        return out


def _spawn_floor(workspace: str, calls: int) -> list[float]:
    """``bash -c true`` started through the door and waited for, as a hook is."""
    prepared = process.prepare(None, ["bash", "-c", "true"], sandbox="off", cwd=workspace)
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        prepared.run(input=b"{}", timeout=60)
        out.append(time.perf_counter() - started)
    return out


def _stats(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {"median_ms": round(statistics.median(seconds) * 1000, 3),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000, 3)}


async def measure(calls: int = 200) -> dict[str, Any]:
    """The figures: medians and p95 per call, and the hook's overhead (difference of
    medians) next to the spawn floor."""
    with tempfile.TemporaryDirectory(prefix="callgate-bench-hooks-") as workspace:
        plain = _stats(await _per_call(_host({}), workspace, calls))
        pre = _stats(await _per_call(_host({"PreToolUse": NOOP_HOOK}), workspace, calls))
        both = _stats(await _per_call(_host({"PreToolUse": NOOP_HOOK,
                                             "PostToolUse": NOOP_HOOK}), workspace, calls))
        floor = _stats(_spawn_floor(workspace, calls))
    overhead = round(pre["median_ms"] - plain["median_ms"], 3)
    return {
        "calls": calls,
        "no_hook": plain,
        "noop_pre_tool_use_hook": pre,
        "noop_pre_and_post_hooks": both,
        "spawn_floor": floor,
        "overhead_per_hook_ms": overhead,
        "overhead_vs_spawn_floor": round(overhead / floor["median_ms"], 2)
        if floor["median_ms"] else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.calls)), indent=2))


if __name__ == "__main__":
    main()
