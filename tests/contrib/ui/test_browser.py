"""In a real browser: headless Chromium (Debian's ``chromium``, installed by ``.ci/run``) driven
by Playwright opens ``callgate ui`` (the command, in a subprocess) on a session recorded
through a real host, and reads what a person would see."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from callgate import ToolCall

from .conftest import DENY, XSS, record, store_path

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"no Chromium at {CHROMIUM} (.ci/run installs Debian's "
    "chromium package; apt-get install -y chromium)",
)


def start_ui(*extra: str) -> tuple[subprocess.Popen[str], str]:
    """``callgate ui`` on a free loopback port; the process and its address."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "callgate_cli",
            "ui",
            "--store",
            str(store_path()),
            "--port",
            "0",
            *extra,
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ},
        start_new_session=True,
    )
    assert proc.stderr is not None
    said = []
    for line in proc.stderr:  # warnings may come first; the address line says it serves
        said.append(line)
        found = re.search(r" at (http://\S+/)", line)
        if found is not None:
            # keep reading what it says, so that a full pipe never blocks it
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, found.group(1)
    proc.kill()
    pytest.fail(f"callgate ui did not start: {''.join(said)}")


@pytest.fixture
def ui() -> Iterator[Any]:
    started: list[subprocess.Popen[str]] = []

    def start(*extra: str) -> str:
        proc, url = start_ui(*extra)
        started.append(proc)
        return url

    yield start
    for proc in started:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def test_a_recorded_session_shows_its_refusal_rule_diff_and_a_live_call(
    host: Any, ws: Path, ui: Any, browser: Any, tmp_path: Path
) -> None:
    session = host.open_session(ws, origin="human")
    record(session)
    url = ui()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)

    page.goto(url)
    page.click(f"a[href='/s/{session.id}']")
    page.wait_for_selector("#timeline")
    # the refused call stands out and names its rule
    refused = page.locator("#timeline .call.refused", has_text="rm -rf build")
    assert refused.count() == 1
    assert DENY in refused.locator(".stage.stopped").inner_text()
    assert "permission" in refused.locator(".stage.stopped").inner_text()
    # the edit shows its diff, coloured
    edit = page.locator("#timeline .call", has_text="edit_file")
    assert edit.locator(".diff .d-del").inner_text() == "-hello world"
    assert edit.locator(".diff .d-add").inner_text() == "+goodbye world"
    assert (
        page.locator(".d-add").evaluate("e => getComputedStyle(e).backgroundColor")
        != "rgba(0, 0, 0, 0)"
    )
    # a tool result with a script tag is text, and no script of it ran
    assert XSS in page.locator("#timeline .call", has_text="evil.txt").inner_text()
    assert page.evaluate("() => document.querySelectorAll('main script').length") == 0
    # the storm hint is marked; the child session sits under the task call
    assert page.locator(".call.storm .badge.storm").count() == 1
    assert page.locator(".call", has_text="task").locator(".child").count() == 1
    page.screenshot(path=str(tmp_path / "session.png"), full_page=True)

    # a call made while the page is open appears without a reload
    page.evaluate("() => { window.__same_page = true; }")
    page.wait_for_function(
        "() => document.getElementById('live-note').textContent.startsWith('live: new')"
    )
    began = time.monotonic()
    session.run(ToolCall("live1", "bash", {"command": "echo appeared-live"}))
    page.wait_for_selector("#timeline .call.outcome-ok:has-text('appeared-live')", timeout=10_000)
    delay = time.monotonic() - began
    assert page.evaluate("() => window.__same_page") is True  # not reloaded
    page.screenshot(path=str(tmp_path / "live.png"), full_page=True)
    session.close()
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'closed'", timeout=10_000
    )
    assert not errors, errors
    assert (tmp_path / "session.png").stat().st_size > 10_000
    shots = os.environ.get("CALLGATE_UI_SHOTS")  # CALLGATE_UI_SHOTS=docs/img: the docs'
    if shots:
        save_shots(Path(shots), page, url, session.id, host, ws)
    print(f"live delay {delay * 1000:.0f} ms")


def save_shots(where: Path, page: Any, url: str, sid: str, host: Any, ws: Path) -> None:
    """The screenshots of docs/ui.md, from this test's real pages."""
    for i, command in enumerate(("ls -la", "cat missing.txt", "wc -l notes.txt")):
        other = host.open_session(ws, origin="human")
        other.record_message("user", f"task {i + 1}: run {command}")
        for j in range(3 + 4 * i):
            other.run(ToolCall(f"c{j}", "bash", {"command": command if j % 3 else "true"}))
        other.close()
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(url)
    page.screenshot(path=str(where / "ui-sessions.png"))
    page.goto(f"{url}s/{sid}?after=0")
    page.screenshot(path=str(where / "ui-session.png"))
    page.locator(".call.refused", has_text="rm -rf build").screenshot(
        path=str(where / "ui-refused.png")
    )
    page.locator(".call:has(.diff)").screenshot(path=str(where / "ui-diff.png"))
    page.locator(".call.storm").screenshot(path=str(where / "ui-storm.png"))
    page.locator(".call", has_text="task").screenshot(path=str(where / "ui-child.png"))
    page.goto(f"{url}search?q=notes")
    page.screenshot(path=str(where / "ui-search.png"))


def test_a_token_is_asked_of_the_browser_and_then_kept_in_a_cookie(
    recorded: Any, ui: Any, browser: Any, tmp_path: Path
) -> None:
    sid, _ = recorded
    token = "t0ken-" + os.urandom(8).hex()
    (tmp_path / "token").write_text(token + "\n")
    url = ui("--token-file", str(tmp_path / "token"))
    page = browser.new_page()
    answer = page.goto(url)
    assert answer.status == 401 and "needs its token" in page.content()
    page.goto(f"{url}s/{sid}?token={token}")
    assert "token" not in page.url  # redirected without it
    assert page.locator(".call.refused", has_text="rm -rf build").count() == 1
    page.click("header.top nav a[href='/']")
    assert page.locator("table.sessions").count() == 1
