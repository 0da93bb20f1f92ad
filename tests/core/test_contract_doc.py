"""The committed docs/TOOL_CONTRACT.md is what the registry generates (host.md §1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_committed_contract_matches_the_registry() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CALLGATE_LOAD_PLUGINS", "CALLGATE_DISABLE_PLUGINS")}
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "contract", "--check"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (
        "docs/TOOL_CONTRACT.md drifted from the registry; run `callgate contract --write`\n"
        + proc.stdout + proc.stderr)


def test_printing_the_contract_shows_installed_third_party_tools(tmp_path: Path) -> None:
    """Issue 36.3: `callgate contract` shows a third-party plugin's row as the model reads it
    (writing-a-tool.md says so); the committed document stays callgate's own."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CALLGATE_LOAD_PLUGINS", "CALLGATE_DISABLE_PLUGINS")}
    printed = subprocess.run([sys.executable, "-m", "callgate_cli", "contract"], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=120)
    assert printed.returncode == 0, printed.stderr
    assert "| `word_count` |" in printed.stdout  # the example plugin, installed here
    assert "| `read_file` |" in printed.stdout
    written = tmp_path / "contract.md"
    subprocess.run([sys.executable, "-m", "callgate_cli", "contract", "--write", "--path",
                    str(written)], cwd=tmp_path, env=env, capture_output=True, timeout=120,
                   check=True)
    assert "word_count" not in written.read_text()
