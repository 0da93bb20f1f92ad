"""``callgate replay`` with the installed web and media plugins (issue 9, "Done means").

The replay uses the real system resolver and a real transport, so it runs in a
network namespace with no route out (``unshare -n``, loopback only): a broken
guard could not send a packet to 10.0.0.1. Skipped, with the reason, where a
namespace cannot be made.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from .netns_replay import PAGE

SCRIPT = Path(__file__).with_name("netns_replay.py")


def netns_unavailable() -> str | None:
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "unshare or ip (iproute2) is not installed"
    probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"cannot create a network namespace here: {probe.stderr.strip()}"
    return None


@pytest.fixture(autouse=True)
def no_real_dns() -> None:
    """Overrides the in-process DNS guard: this test's traffic is confined by the namespace."""


def test_replay_fetches_markdown_refuses_private_redirect_and_views_png(tmp_path: Path) -> None:
    reason = netns_unavailable()
    if reason:
        pytest.skip(f"network-namespace test skipped: {reason}")
    (tmp_path / "ws").mkdir()
    Image.new("RGB", (20, 10), (0, 128, 0)).save(tmp_path / "ws" / "a.png")
    png = (tmp_path / "ws" / "a.png").read_bytes()
    proc = subprocess.run(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$1" "$2"',
         sys.executable, str(SCRIPT), str(tmp_path)],
        capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["no_route_out"] is True  # the sandbox really has no way out
    assert out["returncode"] == 0, out["stderr"]
    port = out["port"]
    page, redirect, image = out["results"]

    assert page["is_error"] is False, page
    assert page["content"] == (
        f"status 200 OK · text/html · {len(PAGE)} bytes\n\nTitle: Local docs\n\n# Guide\n\n"
        f"Read [next](http://127.0.0.1:{port}/next).")

    assert redirect["is_error"] is True
    assert redirect["error"]["signature"] == "WEB_REFUSED_ADDRESS"
    assert "refusing to fetch 10.0.0.1: it resolves to 10.0.0.1 (private)" in \
        redirect["content"]
    assert out["seen"] == ["/page", "/r"]

    assert image["is_error"] is False
    assert image["content"] == [
        {"type": "text", "text": f"Image a.png: PNG, 20 × 10 px, {len(png)} bytes"},
        {"type": "image", "media_type": "image/png", "bytes": len(png)},
    ]
