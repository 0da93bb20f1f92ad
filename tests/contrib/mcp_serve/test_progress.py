"""Progress notifications over a real stdio connection (issue 23, item 4).

The real ``callgate serve`` with the built-in shell plugin, driven by the ``mcp`` SDK's stdio
client with a progress callback (which makes the client send a ``progressToken``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .test_server import run, text_of
from .toolkit import child_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="runs bash")


def serve(ws: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "callgate_cli", "serve", "--workspace", str(ws)],
        env=child_env(),
    )


def test_a_3_second_bash_reports_progress_and_a_call_without_a_token_gets_none(
    tmp_path: Path,
) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    untokened: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def scenario() -> tuple[str, str]:
        async with (
            stdio_client(serve(tmp_path)) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            r = await client.call_tool(
                "bash",
                {"command": "for i in 1 2 3; do echo line $i; sleep 1; done"},
                progress_callback=on_progress,
            )
            before = len(seen)
            plain = await client.call_tool("bash", {"command": "sleep 1.2; echo quiet"})
            untokened.extend(seen[before:])  # nothing arrives for a call without a token
            return text_of(r), text_of(plain)

    text, plain = run(scenario)
    assert "line 3" in text and "[exit code 0]" in text
    assert "quiet" in plain and untokened == []
    assert len(seen) >= 2, seen
    dones = [d for d, _, _ in seen]
    assert dones == sorted(dones) and len(set(dones)) == len(dones)
    assert all(total == 120.0 for _, total, _ in seen)  # the default timeout, in seconds
    assert all(re.fullmatch(r"\d+ s elapsed, \d+ output lines", m or "") for _, _, m in seen)
    assert int(seen[-1][2].split(", ")[1].split()[0]) >= 1  # type: ignore[union-attr]


def test_job_output_wait_reports_progress(tmp_path: Path) -> None:
    seen: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        assert message is not None and message.startswith("waiting for job ")
        seen.append(done)

    async def scenario() -> str:
        async with (
            stdio_client(serve(tmp_path)) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            r = await client.call_tool(
                "bash", {"command": "sleep 2.5; echo finished", "run_in_background": True}
            )
            job = re.search(r"background job (bash-\d+)", text_of(r))
            assert job, text_of(r)
            r = await client.call_tool(
                "job_output", {"job_id": job.group(1), "wait": True}, progress_callback=on_progress
            )
            return text_of(r)

    text = run(scenario)
    assert "finished" in text
    assert len(seen) >= 1 and seen == sorted(seen)
