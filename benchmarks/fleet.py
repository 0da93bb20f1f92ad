"""A 16-task read-only fleet of scripted children vs the same children one by one (issue 22).

Each child is a real child session (a strict read-only ``ChildProfile``) driven by a
scripted runner: it reads one file through its own session (``read_file``, the full
pipeline) and then waits a known time (``--delay-ms`` spread from 0.5x to 1x, so the
slowest child is known). In one run, interleaved per round:

- the slowest child alone, as a one-task ``task`` call (the unit);
- the 16 children one by one, as 16 ``task`` calls (a host without fleets);
- the 16 children as one ``fleet`` call (``[tasks] fleet_max_parallel`` 16).

Target (issue 22): the fleet takes <= 1.5x the slowest child.

    uv run python benchmarks/fleet.py [--tasks 16] [--delay-ms 200] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
import callgate_files
import callgate_tasks
from _timing import summary
from callgate import ToolCall, hookimpl, sync
from callgate_tasks import SubagentOutcome

TARGET = 1.5


class ScriptedRunner:
    """Child ``i`` reads ``a.txt`` in its own session, then sleeps its scripted delay."""

    def __init__(self, delays: dict[str, float]) -> None:
        self.delays = delays

    async def run(self, request: Any) -> SubagentOutcome:
        result = await request.session.run(
            ToolCall(f"read-{request.ref}", "read_file", {"path": "a.txt"})
        )
        assert not result.is_error, result.text
        await anyio.sleep(self.delays[request.prompt])
        return SubagentOutcome(status="completed", answer=f"{request.prompt}: {result.text}")


class Integration:
    def __init__(self, runner: ScriptedRunner) -> None:
        self.runner = runner

    @hookimpl
    def callgate_subagent_runner(self, session: Any) -> Any:
        return self.runner


def _timed(session: Any, name: str, args: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = session.run(ToolCall(f"{name}-{time.perf_counter_ns()}", name, args))
    elapsed = time.perf_counter() - started
    assert not result.is_error, result.text
    return elapsed


def run(tasks: int = 16, delay_ms: float = 200.0, repeat: int = 5) -> dict[str, Any]:
    prompts = [f"child {i}" for i in range(tasks)]
    delays = {
        p: delay_ms / 1000 * (0.5 + 0.5 * i / max(1, tasks - 1)) for i, p in enumerate(prompts)
    }
    slowest = max(prompts, key=delays.__getitem__)
    with tempfile.TemporaryDirectory(prefix="callgate-bench-") as tmp:
        os.environ.setdefault("CALLGATE_HOME", os.path.join(tmp, "home"))
        workspace = os.path.join(tmp, "ws")
        os.mkdir(workspace)
        Path(workspace, "a.txt").write_text("hello\n")
        host = sync.Host.boot(
            {"tasks": {"fleet_max_parallel": 16}},
            plugins=[callgate_files, callgate_tasks, Integration(ScriptedRunner(delays))],
            entrypoints=False,
            surface="full",
        )
        try:
            session = host.open_session(workspace)
            fleet_args = {
                "tasks": [{"prompt": p, "description": p, "read_only": True} for p in prompts]
            }
            _timed(session, "fleet", fleet_args)  # warm up
            one, serial, fleet = [], [], []
            for _ in range(repeat):
                one.append(_timed(session, "task", {"description": "slowest", "prompt": slowest}))
                started = time.perf_counter()
                for p in prompts:
                    _timed(session, "task", {"description": p, "prompt": p})
                serial.append(time.perf_counter() - started)
                fleet.append(_timed(session, "fleet", fleet_args))
        finally:
            host.close()
    one_s, fleet_s, serial_s = (summary(v, "ms") for v in (one, fleet, serial))
    vs_slowest = fleet_s["median"] / one_s["median"]
    return {
        "tasks": tasks,
        "delay_ms": delay_ms,
        "repeat": repeat,
        "slowest_child_delay_ms": round(delays[slowest] * 1000, 1),
        "slowest_child": one_s,
        "fleet": fleet_s,
        "one_by_one": serial_s,
        "fleet_vs_slowest_child": round(vs_slowest, 3),
        "one_by_one_vs_fleet": round(serial_s["median"] / fleet_s["median"], 2),
        "target": TARGET,
        "met": vs_slowest <= TARGET,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=16)
    p.add_argument("--delay-ms", type=float, default=200.0)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    result = run(a.tasks, a.delay_ms, a.repeat)
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"slowest child alone {result['slowest_child']['median']} ms; fleet of "
            f"{a.tasks} {result['fleet']['median']} ms "
            f"({result['fleet_vs_slowest_child']}x, target <= {TARGET}x); one by one "
            f"{result['one_by_one']['median']} ms"
        )
    return result


if __name__ == "__main__":
    main()
