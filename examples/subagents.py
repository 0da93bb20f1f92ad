"""Two subagents run in parallel by SCRIPTED (FAKE) MODELS, and one long result read in pages.

No real model and no network: `ScriptedSubagents` is the integrator's runner
(the ``callgate_subagent_runner`` hook) and answers from a script. One child
writes a long survey (about 20 KB), the other a short check. ``parallel_tasks``
returns both within the output budget — a fair preview and a stable ``Subagent
reference`` each — and ``read_subagent_result`` then pages through the long
answer by UTF-8 byte offset until ``End of subagent result.``

Each child also gets its own session (same workspace, empty observation
ledger): the survey child keeps a task list there with ``todo_write``, which
never touches the parent's list.

Run it: ``python examples/subagents.py``
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import anyio
import callgate_tasks
import callgate_workflow
from callgate import Host, ToolCall, hookimpl
from callgate_tasks import SubagentOutcome, SubagentRequest
from callgate_workflow import TODOS

#: A small output limit, so that the long survey is previewed and must be paged.
CONFIG = {"results": {"max_chars": 6000}}


def survey_text() -> str:
    sections = []
    for n in range(1, 41):
        sections.append(f"## Finding {n}\nModule m{n:02d} reads its config twice; caching the "
                        f"parsed value saves {n * 3} ms per request. Risk: low. "
                        + "Evidence: profiler trace excerpt. " * 12)
    return "# Survey of config loading\n\n" + "\n\n".join(sections) + "\n\n(end of survey)"


class ScriptedSubagents:
    """The integrator's subagent runner, driven by a SCRIPTED (FAKE) MODEL."""

    async def run(self, request: SubagentRequest) -> SubagentOutcome:
        if request.prompt.startswith("Survey"):
            # The child uses its own session for tool calls, like a real subagent loop.
            await request.session.run_batch([ToolCall("c1", "todo_write", {"todos": [
                {"content": "Profile config loading", "status": "completed"},
                {"content": "Write the survey", "status": "completed"}]})])
            await anyio.sleep(0.05)  # "thinking"
            return SubagentOutcome(status="completed", answer=survey_text())
        await anyio.sleep(0.01)
        return SubagentOutcome(status="completed",
                               answer="Checked: all 40 modules load config through one "
                                      "function; no other callers.")


class Integration:
    """The in-process plugin that gives every session the scripted runner."""

    @hookimpl
    def callgate_subagent_runner(self, session: Any) -> ScriptedSubagents:
        return ScriptedSubagents()


async def run(workspace: Path, session_dir: Path) -> dict[str, Any]:
    host = Host.boot(CONFIG, plugins=[callgate_tasks, callgate_workflow, Integration()],
                     entrypoints=False, surface="full")
    async with host.open_session(workspace, session_dir=session_dir, origin="human") as s:
        [result] = await s.run_batch([ToolCall("p1", "parallel_tasks", {"tasks": [
            {"description": "Survey config loading",
             "prompt": "Survey how every module loads its config; report findings."},
            {"description": "Check config callers",
             "prompt": "Check that config is loaded through one function only."}]})])
        print(f"--- parallel_tasks ({len(result.text)} characters, limit "
              f"{CONFIG['results']['max_chars']}):")
        print(result.text)
        survey_ref = result.meta["subagents"][0]["ref"]

        print(f"\n--- reading {survey_ref} in pages")
        pages: list[str] = []
        offset: int | None = 0
        while offset is not None:
            [page] = await s.run_batch([ToolCall(f"r{len(pages)}", "read_subagent_result",
                                                 {"ref": survey_ref, "offset_bytes": offset})])
            header = page.text.splitlines()[0]
            print(header)
            body = page.text.split("\n", 1)[1]
            following = re.search(r"offset_bytes=(\d+)\.$", page.text)
            offset = int(following[1]) if following else None
            pages.append(body.rsplit("\n\nMore remains.", 1)[0]
                         .removesuffix("\n\nEnd of subagent result."))
            if offset is None:
                print(page.text.splitlines()[-1])
        whole = "".join(pages)
        print(f"\nreassembled {len(whole.encode())} bytes; identical to the child's answer: "
              f"{whole == survey_text()}")
        record = s.storage.get("subagents", survey_ref)  # kept in the session store
        print(f"record {survey_ref} in the session store: status={record['status']} "
              f"attempts={record['attempts']}; parent todos: {len(s.extension(TODOS))}")
        return {"refs": [c["ref"] for c in result.meta["subagents"]], "pages": len(pages),
                "identical": whole == survey_text(), "preview_chars": len(result.text)}


def main() -> dict[str, Any]:
    print("subagents: two subagents played by SCRIPTED (FAKE) MODELS — no network\n")
    with tempfile.TemporaryDirectory(prefix="callgate-subagents-") as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        return anyio.run(run, workspace, Path(tmp) / "session")


if __name__ == "__main__":
    main()
