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
    proc = subprocess.run([sys.executable, "-m", "callgate.cli", "contract", "--check"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (
        "docs/TOOL_CONTRACT.md drifted from the registry; run `callgate contract --write`\n"
        + proc.stdout + proc.stderr)
