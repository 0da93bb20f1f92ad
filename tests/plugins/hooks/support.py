"""Front doors for the hook tests: ``callgate replay`` in a subprocess with the test's private
``$CALLGATE_HOME`` / ``$CALLGATE_CONFIG_HOME``, a Claude Code settings file of hooks, and the
hook scripts (taken in shape from Claude Code's documentation) under ``scripts/``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPTS = Path(__file__).resolve().parent / "scripts"
PLUGINS = "files,shell,hooks"

needs_jq = pytest.mark.skipif(shutil.which("jq") is None,
                              reason="jq is not installed (.ci/run installs it)")
needs_node = pytest.mark.skipif(shutil.which("node") is None,
                                reason="node is not installed (.ci/run installs it)")


def script(name: str) -> str:
    """A hook command running ``scripts/<name>`` (quoted, as settings files write them)."""
    return json.dumps(str(SCRIPTS / name))


def settings(hooks: dict[str, Any], permissions: dict[str, Any] | None = None) -> str:
    """A Claude Code ``settings.json``."""
    data: dict[str, Any] = {"hooks": hooks}
    if permissions is not None:
        data["permissions"] = permissions
    return json.dumps(data, indent=2)


def group(matcher: str | None, *handlers: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"hooks": list(handlers)}
    if matcher is not None:
        out["matcher"] = matcher
    return out


def command(cmd: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": cmd, **extra}


def claude_home(tmp_path: Path, settings_text: str) -> Path:
    """A ``~/.claude`` holding ``settings.json``."""
    home = tmp_path / "claude-home"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(settings_text)
    return home


def user_config(config_dir: Path, text: str) -> None:
    (config_dir / "config.toml").write_text(text)


def read_claude(home: Path, extra: str = "") -> str:
    return (f'[claude_code]\nread = ["claude"]\nclaude_dir = {json.dumps(str(home))}\n'
            + extra)


def replay(workspace: Path, lines: list[dict[str, Any]], *extra: str,
           env: dict[str, str] | None = None, plugins: str = PLUGINS,
           check: bool = True) -> tuple[dict[str, dict[str, Any]], str]:
    """``callgate replay`` of ``lines``: its results by call id, and its stderr."""
    transcript = workspace.parent / f"t{os.urandom(4).hex()}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    proc = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", str(transcript), "--workspace",
         str(workspace), "--surface", "full", *extra],
        capture_output=True, text=True, timeout=180,
        env={**os.environ, "CALLGATE_LOAD_PLUGINS": plugins, **(env or {})})
    if check:
        assert proc.returncode == 0, proc.stderr
    return {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}, proc.stderr


def bash(cid: str, command_line: str, **extra: Any) -> dict[str, Any]:
    return {"id": cid, "name": "bash", "arguments": {"command": command_line, **extra}}


def hooks_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    return list(result["meta"].get("hooks", []))
