"""The official MCP conformance suite against ``callgate serve --http`` (issue 34).

``@modelcontextprotocol/conformance`` (and the Node >= 22 it needs), pinned by
``conformance/package-lock.json``, is installed by ``conformance/install.sh`` (``.ci/run``
runs it) into the git-ignored ``.cache/npm-conformance``; the test never downloads. It runs
every server scenario of the suite's active set against a real ``callgate serve --http``:
every scenario whose feature callgate offers passes, and ``conformance/baseline.yml`` lists
the ones that need the suite's own test tools, prompts and resources, each with why (the
suite fails the run on any other failure, and on a listed scenario that passes).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .http_support import Served

HERE = Path(__file__).resolve().parent / "conformance"
ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".cache" / "npm-conformance"
SUITE = CACHE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE = CACHE / "node_modules" / ".bin" / "node"
#: what callgate offers and the suite checks with callgate's own tools, prompts and resources
MUST_PASS = {"server-initialize", "ping", "logging-set-level", "completion-complete",
             "tools-list", "resources-list", "prompts-list", "server-sse-multiple-streams",
             "dns-rebinding-protection"}

pytestmark = pytest.mark.skipif(
    not (SUITE.is_file() and NODE.is_file()),
    reason="the MCP conformance suite is not installed: run "
           "tests/contrib/mcp_serve/conformance/install.sh (needs npm; .ci/run does it)")


def test_the_official_conformance_suite_passes_every_feature_callgate_offers(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    out = tmp_path / "results"
    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
        proc = subprocess.run(
            [str(NODE), str(SUITE), "server", "--url", served.url,
             "--expected-failures", str(HERE / "baseline.yml"), "-o", str(out)],
            capture_output=True, text=True, timeout=900, cwd=tmp_path,
            env={"PATH": f"{NODE.parent}:/usr/bin:/bin", "HOME": str(tmp_path),
                 "NO_COLOR": "1"})
        log = "".join(served.log)
    summary = proc.stdout[proc.stdout.find("=== SUMMARY"):]
    assert proc.returncode == 0, f"{summary}\n{proc.stderr[-3000:]}\nserver log:\n{log[-3000:]}"
    expected = {line.strip()[2:] for line in (HERE / "baseline.yml").read_text().splitlines()
                if line.startswith("  - ")}  # the baseline's server list
    results: dict[str, list[str]] = {}
    for checks in out.glob("server-*/checks.json"):
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z?$", "",
                          checks.parent.name.removeprefix("server-"))
        results[scenario] = [c["status"] for c in json.loads(checks.read_text())]
    assert set(results) >= MUST_PASS, f"scenarios not run: {MUST_PASS - set(results)}"
    for scenario, statuses in results.items():
        if scenario in expected:
            continue
        assert "FAILURE" not in statuses, (scenario, statuses, summary)
    assert "Traceback" not in log, log[-3000:]
    shutil.rmtree(out, ignore_errors=True)
