"""``callgate ui`` shows the hooks callgate-hooks ran for a call at the stage they acted:
a PreToolUse block at pre-tool-use (with the hook's stderr), a PostToolUse hook at the tool."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from callgate import ToolCall, sync
from starlette.testclient import TestClient


def test_hooks_are_shown_at_the_stage_they_acted(ws: Path, reader: Any,
                                                 client: TestClient) -> None:
    guard = ("cmd=$(cat); case \"$cmd\" in *'rm -rf'*) echo 'no rm -rf, says the hook' >&2; "
             "exit 2;; esac")
    after = ("echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", "
             "\"additionalContext\": \"checked by the post hook\"}}'")
    host = sync.Host.boot({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": after}]}],
    }}, entrypoints=["files", "shell", "hooks"], surface="full", user_config=False)
    session = host.open_session(ws)
    blocked, ran = session.run_batch([ToolCall("r1", "bash", {"command": "rm -rf x"})])[0], \
        session.run_batch([ToolCall("e1", "bash", {"command": "echo hi"})])[0]
    sid = session.id
    session.close()
    assert blocked.is_error and "no rm -rf, says the hook" in blocked.text
    assert "checked by the post hook" in ran.text
    html = client.get(f"/s/{sid}").text
    calls = {c.call_id: c for c in reader.calls(sid)}
    box = _call(html, calls["r1"].seq)
    assert 'class="stage stopped" title="pre-tool-use: stopped (hooks (' in box
    hook = re.search(r'<div class="hook deny">.*?</div>', box, re.S)
    assert hook is not None and "<b>pre-tool-use</b> PreToolUse" in hook.group(0)
    assert "exit 2" in hook.group(0) and "no rm -rf, says the hook" in hook.group(0)
    box = _call(html, calls["e1"].seq)
    assert "<b>pre-tool-use</b> PreToolUse" in box and "exit 0" in box
    assert "<b>tool</b> PostToolUse" in box and "context: checked by the post hook" in box


def _call(html: str, seq: int) -> str:
    found = re.search(rf'<article class="call[^"]*" id="e{seq}".*?</article>', html, re.S)
    assert found, f"no call #{seq}"
    return found.group(0)
