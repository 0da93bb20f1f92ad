"""The code in the docs runs: the plugin and test files of the authoring guides, the sync
embedding snippet, and every relative link points at something that exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .test_docs_coverage import DOCS

pytest_plugins = ["pytester"]

FENCE = re.compile(r"```python\n(.*?)```", re.S)


def file_blocks(*pages: str) -> dict[str, str]:
    """``{path: code}`` for every python block whose first line is ``# file: <path>``."""
    out = {}
    for page in pages:
        for code in FENCE.findall((DOCS / page).read_text()):
            first, _, rest = code.partition("\n")
            m = re.fullmatch(r"# file: (\S+)", first.strip())
            if m:
                out[m.group(1)] = rest
    return out


def test_the_authoring_guides_plugin_and_tests_pass(pytester: pytest.Pytester) -> None:
    blocks = file_blocks("writing-a-tool.md", "testing-a-tool.md")
    assert {"callgate_append/__init__.py", "test_append.py", "test_word_count_replay.py"} \
        <= set(blocks)
    for rel, code in blocks.items():
        target = pytester.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=7)


def test_the_sync_embedding_snippet_runs(tmp_path: Path) -> None:
    [snippet] = [c for c in FENCE.findall((DOCS / "embedding.md").read_text())
                 if "from callgate.sync import Host" in c]
    (tmp_path / "README.md").write_text("# hello from the docs\n")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(snippet)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "1→# hello from the docs" in proc.stdout


def slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


GENERATED = {"TOOL_CONTRACT.md"}  # written by `callgate contract --write`, checked by its own test


def test_relative_links_resolve() -> None:
    broken = []
    for page in DOCS.glob("*.md"):
        text = page.read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+://", target) or target in GENERATED:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path) if path else page
            if not dest.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and anchor not in {slug(h) for h in
                                           re.findall(r"^#+ (.+)$", dest.read_text(), re.M)}:
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_mcp_quick_try_edits_a_file_through_callgate_serve(tmp_path: Path) -> None:
    [snippet] = [c for c in FENCE.findall((DOCS / "mcp.md").read_text()) if "stdio_client" in c]
    script = tmp_path / "try_serve.py"
    script.write_text(snippet)
    ws = tmp_path / "cg-demo"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello world\n")
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep
           + os.environ.get("PATH", ""),  # `callgate` as `uv run` would find it
           # the MCP client hands the server only HOME, PATH and a few more: a private HOME
           # keeps the served session's store out of the user's real state directory
           "HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, str(script), str(ws)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("tools: ") and "edit_file" in lines[0]
    assert lines[1].startswith("edit_file: ERROR FS_NOT_OBSERVED")
    assert lines[2] == "read_file: 1→hello world"
    assert lines[3] == "edit_file: edited notes.txt"
    assert (ws / "notes.txt").read_text() == "goodbye world\n"
