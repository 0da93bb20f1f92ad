"""Child sessions (issue 22): what opening and closing a subagent's session costs.

- **Child open + close**: ``session.open_child(profile=ChildProfile(read_only=True))`` and
  its close, on a parent whose MCP server is connected (the child shares that connection:
  the benchmark checks that the child sees the live server and that no second server
  process starts). Baseline, in the same run, interleaved: opening and closing a plain
  session with ``host.open_session`` on the same host. Both with every installed plugin
  and the session store recording (``[sessions] record`` default), in a temporary
  ``CALLGATE_HOME``. Target ≤ 2 ms per child.

    uv run python benchmarks/subagents.py [--rounds 300] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import summary
from callgate_capability import MCP_SERVERS

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "mcp_fixture_server.py"
TARGET_CHILD_MS = 2.0


async def measure(rounds: int) -> dict[str, Any]:
    from callgate import ChildProfile, Host, ToolCall

    with tempfile.TemporaryDirectory(prefix="callgate-bench-subagents-") as tmp:
        os.environ["CALLGATE_HOME"] = os.path.join(tmp, "home")
        os.environ["CALLGATE_CONFIG_HOME"] = os.path.join(tmp, "config")
        workspace = os.path.join(tmp, "ws")
        os.makedirs(workspace)
        config = {
            "capability": {"cache_dir": os.path.join(tmp, "cache")},
            "mcp_servers": {"fixture": {"command": sys.executable, "args": [str(FIXTURE)]}},
        }
        host = Host.boot(config, workspace=workspace, user_config=False)
        profile = ChildProfile(name="bench", read_only=True)
        async with host.open_session(workspace) as parent:
            [connected] = await parent.run_batch(
                [
                    ToolCall(
                        "c",
                        "use_capability",
                        {"action": "call", "capability_id": "mcp-server:fixture"},
                    )
                ]
            )
            assert not connected.is_error, connected.text
            server_pid = parent.extension(MCP_SERVERS).pid("fixture")
            child_s: list[float] = []
            plain_s: list[float] = []
            for i in range(rounds + 10):  # the first 10 of each are warm-up
                t0 = time.perf_counter()
                child = parent.open_child(profile=profile)
                await child.close()
                t1 = time.perf_counter()
                plain = host.open_session(workspace)
                await plain.close()
                t2 = time.perf_counter()
                if i >= 10:
                    child_s.append(t1 - t0)
                    plain_s.append(t2 - t1)
            check = parent.open_child(profile=profile)
            shares = check.extension(MCP_SERVERS).pid("fixture") == server_pid is not None
            await check.close()
    child, plain = summary(child_s, "ms"), summary(plain_s, "ms")
    return {
        "rounds": rounds,
        "child": child,
        "plain_session": plain,
        "ratio": round(child["median"] / plain["median"], 3),
        "shares_mcp_connection": shares,
        "target_ms": TARGET_CHILD_MS,
        "met": child["median"] <= TARGET_CHILD_MS,
    }


def run(rounds: int = 300) -> dict[str, Any]:
    return asyncio.run(measure(rounds))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.rounds)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        c, p = result["child"], result["plain_session"]
        print(
            f"child open+close {c['median']} ms (p95 {c['p95']}); a plain session "
            f"{p['median']} ms (p95 {p['p95']}); ratio {result['ratio']}×; shares the MCP "
            f"connection: {result['shares_mcp_connection']}; target ≤ {TARGET_CHILD_MS} ms"
        )
    return result


if __name__ == "__main__":
    main()
