"""view_image through ``callgate replay`` in a subprocess (issue 9, "Done means")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def replay(transcript: Path, workspace: Path, *extra: str) -> list[dict[str, Any]]:
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "media"}
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", str(transcript),
                           "--workspace", str(workspace), *extra],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_replay_views_a_png_with_an_image_block(tmp_path: Path,
                                                images: dict[str, bytes]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.png").write_bytes(images["png"])
    (ws / "notes.txt").write_text("words\n")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in [
        {"id": "v1", "name": "view_image", "arguments": {"path": "a.png"}},
        {"id": "v2", "name": "view_image", "arguments": {"path": "notes.txt"}},
    ]) + "\n")
    ok, refused = replay(transcript, ws)
    line = f"Image a.png: PNG, 640 × 480 px, {len(images['png'])} bytes"
    assert ok["is_error"] is False and ok["error"] is None
    assert ok["content"] == [{"type": "text", "text": line},
                             {"type": "image", "media_type": "image/png",
                              "bytes": len(images["png"])}]
    assert refused["is_error"] is True
    assert refused["error"]["kind"] == "tool_error"
    assert refused["content"].endswith("(detected: text)")


def test_replay_with_vision_off_and_no_describer_has_no_view_image(
        tmp_path: Path, images: dict[str, bytes]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.png").write_bytes(images["png"])
    config = tmp_path / "callgate.toml"
    config.write_text("[media]\nvision = false\n")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"id": "v1", "name": "view_image",
                                      "arguments": {"path": "a.png"}}) + "\n")
    [result] = replay(transcript, ws, "--config", str(config))
    assert result["error"]["kind"] == "unavailable"  # registered, not here (issue 36.6)
