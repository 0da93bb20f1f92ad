"""Fixtures for the lsp plugin tests: sessions with real language servers, and process checks.

Servers come from the project's own files: ``jedi-language-server`` and ``basedpyright`` from the
root ``dev`` group (PyPI), the TypeScript server from ``npm/package-lock.json`` (installed by
``.ci/run`` or, the first time, by ``npm_servers`` below when npm exists), and
``scripted_server.py`` (pygls) for the failures a real server will not produce on demand.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_files
import callgate_lsp
import callgate_shell
import psutil
import pytest
from callgate.testing import CallgateSession
from callgate_lsp import LSP

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
NPM_BIN = ROOT / ".cache" / "npm-lsp" / "node_modules" / ".bin"
SCRIPTED = HERE / "scripted_server.py"
PLUGINS = (callgate_lsp, callgate_files, callgate_shell, callgate_capability)


def need(command: str) -> str:
    found = shutil.which(command)
    if found is None:
        pytest.skip(f"{command} is not on PATH (it comes with the root dev group: uv sync)")
    return found


@pytest.fixture(scope="session")
def npm_servers() -> Path:
    """The folder holding ``typescript-language-server`` (installed from the lock if needed)."""
    if not (NPM_BIN / "typescript-language-server").exists():
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed, so typescript-language-server cannot be had; "
                        "the TypeScript cases need Node.js and npm")
        done = subprocess.run(["bash", str(HERE / "npm" / "install.sh")], capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            pytest.skip(f"npm could not install typescript-language-server: "
                        f"{done.stderr.strip()[-500:]}")
    return NPM_BIN


def python_config(server: str, **lsp: Any) -> dict[str, Any]:
    """``[lsp]`` with the Python server chosen: ``"jedi"`` or ``"basedpyright"``."""
    servers: dict[str, Any] = {}
    if server == "jedi":
        # jedi imports compiled modules it finds to read them, so the jedi server needs the
        # sandbox (issue 30); these sessions have none, and the tests' workspaces hold none
        servers["python"] = {"command": need("jedi-language-server"), "sandbox": "if_available"}
    else:
        servers["python"] = {"command": need("basedpyright-langserver"), "args": ["--stdio"]}
    for language, table in lsp.pop("servers", {}).items():
        servers[language] = {**servers.get(language, {}), **table}
    return {"lsp": {**lsp, "servers": servers}}


def scripted_config(tmp_path: Path, *modes: str, **lsp: Any) -> dict[str, Any]:
    """``[lsp]`` routing ``.scr`` files to the scripted server with ``modes``."""
    record = tmp_path / "scripted"
    record.mkdir(exist_ok=True)
    return {"lsp": {**lsp, "servers": {"scripted": {
        "command": sys.executable, "args": [str(SCRIPTED)], "extensions": [".scr"],
        "env": {"SCRIPTED_DIR": str(record), "SCRIPTED_MODES": ",".join(modes)}}}}}


@pytest.fixture
def lsp_session(no_leaks: None, callgate_session: Callable[..., CallgateSession]
                ) -> Callable[..., CallgateSession]:
    """``lsp_session(config, files={...})``: lsp, files, shell and capability on a workspace.

    At teardown every host is closed, then no process the test started may be left."""

    def make(config: dict[str, Any], files: dict[str, Any] | None = None,
             plugins: tuple[Any, ...] = (), **kwargs: Any) -> CallgateSession:
        return callgate_session(plugins=[*PLUGINS, *plugins], files=files, config=config,
                                **kwargs)

    return make


def fresh_diagnostics(s: CallgateSession, file: str, timeout: float = 60.0) -> Any:
    """``lsp_diagnostics`` until the server has reported on the current contents (a cold
    server on a loaded machine can take longer than the tool's 2 s wait)."""
    deadline = time.monotonic() + timeout
    while True:
        if s.session.is_visible("lsp_diagnostics"):
            r = s.call("lsp_diagnostics", file=file)
        else:
            r = s.call("use_capability", {"action": "call",
                                          "capability_id": "tool:lsp_diagnostics",
                                          "arguments": {"file": file}})
        # fresh, and not an answer the server gave while still indexing (a cold server on a
        # loaded machine, e.g. four test workers at once, says so and may say more later)
        settled = r.meta.get("fresh") and "still loading or indexing" not in r.text
        if settled or r.is_error or time.monotonic() > deadline:
            return r
        time.sleep(0.1)


# --- processes -------------------------------------------------------------------------------


def server_pids(session: CallgateSession) -> dict[str, int]:
    return {s["language"]: s["pid"] for s in session.session.extension(LSP).servers()}


def group_members(pgid: int) -> list[psutil.Process]:
    """Live (not zombie) processes whose process group is ``pgid``."""
    out = []
    for proc in psutil.process_iter(["status"]):
        try:
            if os.getpgid(proc.pid) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except (ProcessLookupError, psutil.Error, OSError):
            continue
    return out


def wait_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    """The pids still alive (not zombies) after waiting up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [p for p in pids if _alive(p)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def descendants() -> set[int]:
    """This process's descendants, but the core's lifeline helper (it lives as long as this
    process does, by design: it ends what sessions started if this process is killed)."""
    from callgate._pipeline.lifeline import lifeline

    return {p.pid for p in psutil.Process().children(recursive=True)} - {lifeline.pid}


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """Fail if a process started during the test (a server, its children) outlives it."""
    before = descendants()
    yield
    leftover = sorted(descendants() - before)
    assert not wait_gone(leftover), "processes left running after the test"
