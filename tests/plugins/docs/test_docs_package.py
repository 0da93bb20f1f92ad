"""callgate's own docs ship inside the callgate-docs wheel, and an installed copy finds them.

The wheel is built with hatchling (a dev dependency: nothing is downloaded), from the
repository and from its sdist, unpacked into a directory that comes first on ``PYTHONPATH``,
and imported in a subprocess, so the package found is the built one, not the checkout's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[3] / "plugins" / "docs"
REPO_DOCS = PLUGIN.parent.parent / "docs"

PROBE = textwrap.dedent("""
    import json, callgate_docs
    from callgate import ToolCall, sync
    host = sync.Host.boot({}, plugins=[callgate_docs], entrypoints=False, surface="full")
    session = host.open_session(".")
    [hit] = session.run_batch([ToolCall("d1", "docs", {"operation": "search",
                                                       "query": "permissions", "limit": 1})])
    print(json.dumps({"module": callgate_docs.__file__,
                      "docs": str(callgate_docs.host_docs_dir()), "hit": hit.text}))
    session.close(); host.close()
""")


def _build(target: str, source: Path, out: Path) -> Path:
    proc = subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", target, "-d",
                           str(out)], cwd=source, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    [built] = [p for p in out.iterdir() if p.name.endswith((".whl", ".tar.gz"))]
    return built


def _installed_probe(wheel: Path, site: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(site)
    docs = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("callgate_docs/host_docs/"))
    assert docs == sorted(p.name for p in REPO_DOCS.glob("*.md"))
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=site, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.slow
def test_the_built_wheel_carries_callgates_docs_and_finds_them(tmp_path):
    wheel = _build("wheel", PLUGIN, tmp_path / "dist")
    probe = _installed_probe(wheel, tmp_path / "site")
    assert Path(probe["module"]).is_relative_to(tmp_path / "site")
    assert probe["docs"] == str(tmp_path / "site" / "callgate_docs" / "host_docs")
    assert "1. callgate:permissions.md#" in probe["hit"]


@pytest.mark.slow
def test_a_wheel_built_from_the_sdist_carries_them_too(tmp_path):
    sdist = _build("sdist", PLUGIN, tmp_path / "sdist")
    with tarfile.open(sdist) as archive:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(tmp_path / "unpacked", **safe)  # type: ignore[arg-type]
    [source] = (tmp_path / "unpacked").iterdir()
    assert (source / "callgate_docs" / "host_docs" / "config.md").is_file()
    wheel = _build("wheel", source, tmp_path / "dist")
    probe = _installed_probe(wheel, tmp_path / "site")
    assert probe["docs"] == str(tmp_path / "site" / "callgate_docs" / "host_docs")
