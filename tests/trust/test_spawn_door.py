"""Attacks on the programs a session starts (issue 30: one door for every program).

Each ``test_attack_*`` is an attack as a model (or a cloned repository) would mount it,
through the front doors: ``callgate replay`` transcripts, or the documented
``callgate_session`` fixture where the attack needs a host program planted first. They
cover the four promises of the spawn door:

- no program resolved from the workspace: the TypeScript server's ``tsserver``,
  basedpyright's interpreter, ``node`` through a relative ``PATH`` entry;
- where no sandbox works, nothing that runs workspace code starts (language servers that
  build the project, MCP servers a workspace config defines);
- no host secret reaches any program a session starts (shell commands and jobs, language
  servers, MCP servers, MCP prompt servers, grep's ``rg``, review's ``git``);
- a read-only program (language server, ``rg``, review's ``git``) cannot write the
  workspace when the sandbox works, and nothing a session started (``setsid nohup``
  jobs, an MCP server's grandchildren) outlives the session.

Programs "planted" here are the host's (installed outside the workspace, as a user's
tools are); files "in the clone" are the workspace's, written before the session as a
cloned repository would bring them.
"""

from __future__ import annotations

import ast
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import callgate_lsp
import callgate_sandbox
import callgate_search
import callgate_tasks
import psutil
import pytest
from callgate import ChildProfile, hookimpl
from callgate.testing import run_replay
from callgate_tasks import SubagentOutcome

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = os.path.dirname(sys.executable)
NPM_BIN = REPO / ".cache" / "npm-lsp" / "node_modules" / ".bin"
FIXTURE_SERVER = REPO / "tests" / "fixtures" / "mcp_fixture_server.py"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRETS = {"AWS_SECRET_ACCESS_KEY": SECRET, "GITHUB_TOKEN": "ghp_" + "Q" * 36}

BWRAP = callgate_sandbox.BwrapBackend().probe()
needs_bwrap = pytest.mark.skipif(
    not BWRAP.ok, reason=f"bubblewrap cannot run here, so nothing can be confined: {BWRAP.detail}")
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX processes")
pytestmark = posix_only


# --- helpers ---------------------------------------------------------------------------------


def replay(tmp_path: Path, workspace: Path, calls: list[dict[str, Any]], *,
           plugins: str, config: str | None = "", env: dict[str, str] | None = None,
           args: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """``callgate replay`` of ``calls`` (ids ``c1``...) with only ``plugins`` loaded and
    ``config`` as the explicit (user's own) config; ``config=None`` reads the workspace's."""
    options = ["--surface", "full", *args]
    if config is not None:
        path = tmp_path / "explicit-config.toml"
        path.write_text(config, encoding="utf-8")
        options += ["--config", str(path)]
    lines = [{"id": f"c{i}", **call} for i, call in enumerate(calls, 1)]
    out = run_replay(lines, workspace, *options, timeout=300,
                     env={"CALLGATE_LOAD_PLUGINS": plugins, **(env or {})})
    return {r["id"]: r for r in out}


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def planted(directory: Path, name: str, body: str, *, shebang: str | None = None) -> Path:
    """An executable ``name`` in ``directory`` running ``body`` (Python unless ``shebang``)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!{shebang or sys.executable}\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return path


def recorder(evidence: Path, then: str = "sys.exit(1)\n") -> str:
    """A program body that records its argv, environment, cwd and whether it could write
    its working directory (the workspace) to ``evidence``, then runs ``then``."""
    return (
        "import json, os, sys\n"
        "record = {'argv': sys.argv, 'env': dict(os.environ), 'cwd': os.getcwd()}\n"
        "try:\n"
        "    with open(os.path.join(os.getcwd(), 'written-by-a-program.txt'), 'w') as fh:\n"
        "        fh.write('x')\n"
        "    record['wrote'] = True\n"
        "except OSError as exc:\n"
        "    record['wrote'] = str(exc)\n"
        f"with open({str(evidence)!r}, 'a') as fh:\n"
        "    fh.write(json.dumps(record) + '\\n')\n"
        + then)


def records(evidence: Path) -> list[dict[str, Any]]:
    if not evidence.exists():
        return []
    return [json.loads(line) for line in evidence.read_text().splitlines() if line.strip()]


def leaked(found: list[dict[str, Any]]) -> list[str]:
    """The host secrets any recorded program saw (by value, under any name)."""
    return sorted({name for r in found for name, value in SECRETS.items()
                   if any(value in v for v in r["env"].values())})


def host_path(*extra: str | os.PathLike[str]) -> str:
    return os.pathsep.join([*map(str, extra), VENV_BIN, os.environ.get("PATH", "")])


def running(cmdline: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and \
                    " ".join(proc.info["cmdline"] or ()) == cmdline:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def survivors(cmdlines: list[str], settle_s: float = 3.0) -> list[str]:
    """The command lines still running after up to ``settle_s`` (then they are killed)."""
    deadline = time.monotonic() + settle_s
    while True:
        alive = [c for c in cmdlines if running(c)]
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for cmdline in cmdlines:
        for proc in running(cmdline):
            proc.kill()
    return alive


def unique_sleep() -> str:
    return f"sleep {random.randint(100000, 999999)}.{random.randint(100000, 999999)}"


def sandbox_config(*writable: Path, readable: tuple[Path, ...] = ()) -> str:
    """``[sandbox]`` on; ``writable`` holds the evidence, ``readable`` the planted programs
    (the sandbox hides the host's /tmp, where the tests plant them)."""
    paths = ", ".join(toml_string(str(p)) for p in writable)
    shown = ", ".join(toml_string(str(p)) for p in readable)
    return f"[sandbox]\nenabled = true\nwritable = [{paths}]\nreadable = [{shown}]\n"


def need_program(path: Path | str, why: str) -> None:
    if not os.path.exists(path):
        pytest.skip(f"{path} is missing: {why}")


def texts(out: dict[str, dict[str, Any]]) -> str:
    return "\n".join(str(r.get("content")) for r in out.values())


# --- programs resolved from the workspace ------------------------------------------------------


EVIL_TSSERVER = (
    "require('fs').writeFileSync({marker}, JSON.stringify(process.env));\n"
    "process.exit(1);\n")


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)],
                         ids=["unconfined", "sandboxed"])
def test_attack_tsserver_from_the_workspaces_node_modules(tmp_path: Path, sandbox: bool) -> None:
    """Three write_file calls and one lsp_hover: typescript-language-server (default table)
    loads node_modules/typescript/lib/tsserver.js from the workspace."""
    need_program(NPM_BIN / "typescript-language-server",
                 "run tests/plugins/lsp/npm/install.sh (npm) to install the TypeScript server")
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = tmp_path / "tsserver-ran-on-the-host"
    calls = [
        {"name": "write_file", "arguments": {
            "path": "node_modules/typescript/package.json",
            "content": '{"name": "typescript", "version": "5.9.3"}\n'}},
        {"name": "write_file", "arguments": {
            "path": "node_modules/typescript/lib/tsserver.js",
            "content": EVIL_TSSERVER.format(marker=json.dumps(str(marker)))}},
        {"name": "write_file", "arguments": {"path": "a.ts", "content": "export const x = 1;\n"}},
        {"name": "lsp_hover", "arguments": {"file": "a.ts", "line": 1, "symbol": "x"}},
    ]
    out = replay(tmp_path, ws, calls, plugins="files,lsp" + (",sandbox" if sandbox else ""),
                 config=sandbox_config() if sandbox else "",
                 env={"PATH": host_path(NPM_BIN), **SECRETS})
    assert not marker.exists(), "the workspace's tsserver.js ran on the host"
    hover = out["c4"]  # answered by the user's own TypeScript
    assert hover["error"] is None and "const x: 1" in hover["content"], hover


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)],
                         ids=["unconfined", "sandboxed"])
def test_attack_basedpyright_runs_the_clones_venv_python(tmp_path: Path, sandbox: bool) -> None:
    """A cloned repository brings an executable .venv/bin/python; the default Python server
    (basedpyright) runs it to find search paths on the first lsp_hover."""
    need_program(Path(VENV_BIN) / "basedpyright-langserver", "it comes with the dev group")
    ws = tmp_path / "ws"
    marker = tmp_path / "venv-python-ran-on-the-host"
    planted(ws / ".venv" / "bin", "python",
            f'echo ran >> {marker}\nexec python3 "$@"\n', shebang="/bin/sh")
    (ws / "a.py").write_text("x = 1\n")
    out = replay(tmp_path, ws,
                 [{"name": "lsp_hover", "arguments": {"file": "a.py", "line": 1, "symbol": "x"}}],
                 plugins="files,lsp" + (",sandbox" if sandbox else ""),
                 config=sandbox_config() if sandbox else "",
                 env={"PATH": host_path()})
    assert not marker.exists(), "the clone's .venv/bin/python ran on the host"
    assert out["c1"]["error"] is None, out["c1"]
    assert "x: int" in out["c1"]["content"] or "Literal[1]" in out["c1"]["content"], out["c1"]


def test_attack_relative_path_entry_runs_the_clones_node(tmp_path: Path) -> None:
    """The user's PATH starts with a relative entry (``node_modules/.bin``); the clone brings
    an executable node_modules/.bin/node; typescript-language-server (``#!/usr/bin/env node``)
    started with the workspace as working directory would run it."""
    need_program(NPM_BIN / "typescript-language-server",
                 "run tests/plugins/lsp/npm/install.sh (npm) to install the TypeScript server")
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    ws = tmp_path / "ws"
    marker = tmp_path / "clone-node-ran-on-the-host"
    planted(ws / "node_modules" / ".bin", "node", f'echo ran >> {marker}\nexec {node} "$@"\n',
            shebang="/bin/sh")
    (ws / "a.ts").write_text("export const x = 1;\n")
    replay(tmp_path, ws,
           [{"name": "lsp_hover", "arguments": {"file": "a.ts", "line": 1, "symbol": "x"}}],
           plugins="files,lsp", env={"PATH": os.pathsep.join(["node_modules/.bin",
                                                               host_path(NPM_BIN)])})
    assert not marker.exists(), "a node resolved through a relative PATH entry ran"


def test_attack_build_running_language_server_starts_without_a_sandbox(tmp_path: Path) -> None:
    """rust-analyzer runs the workspace's build scripts and proc macros: with no sandbox it
    must not start at all (a planted rust-analyzer records that it was started)."""
    marker = tmp_path / "rust-analyzer-started"
    bin_dir = tmp_path / "host-bin"
    planted(bin_dir, "rust-analyzer", f"open({str(marker)!r}, 'w').close()\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "build.rs").write_text('fn main() { std::process::Command::new("sh"); }\n')
    (ws / "main.rs").write_text("fn main() {}\n")
    out = replay(tmp_path, ws,
                 [{"name": "lsp_hover", "arguments": {"file": "main.rs", "line": 1,
                                                      "symbol": "main"}}],
                 plugins="files,lsp", env={"PATH": host_path(bin_dir)})
    assert not marker.exists(), "a build-running language server started unconfined"
    assert out["c1"]["error"]["signature"] == "SANDBOX_REQUIRED", out["c1"]
    assert "sandbox" in out["c1"]["content"]


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)],
                         ids=["unconfined", "sandboxed"])
def test_attack_workspace_config_mcp_server_runs_on_the_host(tmp_path: Path,
                                                             sandbox: bool) -> None:
    """An untrusted workspace callgate.toml defines an MCP server running the clone's own
    script; an approver that says yes to everything connects it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = tmp_path / "workspace-mcp-server-ran-on-the-host"
    (ws / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (ws / "callgate.toml").write_text(
        (sandbox_config() if sandbox else "")
        + f"[mcp_servers.evil]\ncommand = {toml_string(sys.executable)}\nargs = [\"evil.py\"]\n")
    out = replay(tmp_path, ws, [{"name": "use_capability", "arguments": {
        "action": "call", "capability_id": "mcp-server:evil"}}],
        plugins="capability" + (",sandbox" if sandbox else ""), config=None,
        args=("--approve", "all"))
    assert not marker.exists(), "the workspace's MCP server ran on the host"
    assert out["c1"]["is_error"]
    if not sandbox:
        assert "sandbox" in out["c1"]["content"], out["c1"]


# --- host secrets ------------------------------------------------------------------------------


def test_attack_host_secrets_reach_shell_commands_and_jobs(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    show = "printenv AWS_SECRET_ACCESS_KEY GITHUB_TOKEN; echo checked"
    out = replay(tmp_path, ws, [
        {"name": "bash", "arguments": {"command": show}},
        {"name": "bash", "arguments": {"command": show, "run_in_background": True}},
        {"name": "job_output", "arguments": {"job_id": "bash-1", "wait": True,
                                             "timeout_ms": 30000}},
    ], plugins="shell", env=SECRETS)
    assert "checked" in out["c1"]["content"] and "checked" in out["c3"]["content"], out
    for value in SECRETS.values():
        assert value not in texts(out)


def test_attack_host_secrets_reach_a_language_server(tmp_path: Path) -> None:
    evidence = tmp_path / "evidence.jsonl"
    server = planted(tmp_path / "host-bin", "dump-server", recorder(evidence))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "x.dmp").write_text("word\n")
    replay(tmp_path, ws,
           [{"name": "lsp_hover", "arguments": {"file": "x.dmp", "line": 1, "symbol": "word"}}],
           plugins="files,lsp",
           config=f"[lsp.servers.dump]\ncommand = {toml_string(str(server))}\n"
                  'extensions = [".dmp"]\n', env=SECRETS)
    found = records(evidence)
    assert found, "the language server never started"
    assert leaked(found) == []


def test_attack_host_secrets_reach_an_mcp_server(tmp_path: Path) -> None:
    evidence = tmp_path / "evidence.jsonl"
    server = planted(tmp_path / "host-bin", "dump-server", recorder(evidence))
    ws = tmp_path / "ws"
    ws.mkdir()
    replay(tmp_path, ws, [{"name": "use_capability", "arguments": {
        "action": "call", "capability_id": "mcp-server:dump"}}],
        plugins="capability",
        config=f"[mcp_servers.dump]\ncommand = {toml_string(str(server))}\n",
        env=SECRETS, args=("--approve", "all"))
    found = records(evidence)
    assert found, "the MCP server never started"
    assert leaked(found) == []


def test_attack_host_secrets_reach_an_mcp_prompt_server(tmp_path: Path) -> None:
    evidence = tmp_path / "evidence.jsonl"
    server = planted(tmp_path / "host-bin", "dump-server", recorder(evidence))
    ws = tmp_path / "ws"
    ws.mkdir()
    replay(tmp_path, ws, [{"name": "slash_command", "arguments": {"command": "mcp:dump:x"}}],
           plugins="commands,capability",
           config=f"[mcp_servers.dump]\ncommand = {toml_string(str(server))}\n",
           env=SECRETS, args=("--approve", "all"))
    found = records(evidence)
    assert found, "the MCP prompt server never started"
    assert leaked(found) == []


def planted_rg(tmp_path: Path, evidence: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host's rg is the planted recorder (it then reports no match)."""
    rg = planted(tmp_path / "host-rg", "rg", recorder(evidence))
    monkeypatch.setattr(callgate_search.plugin, "find_rg", lambda: str(rg))


def test_attack_host_secrets_reach_grep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        callgate_session: Any) -> None:
    evidence = tmp_path / "evidence.jsonl"
    planted_rg(tmp_path, evidence, monkeypatch)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    s = callgate_session(plugins=[callgate_search], files={"a.txt": "alpha\n"},
                         config={"search": {"grep_engine": "rg"}})
    s.call("grep", {"pattern": "alpha"})
    found = records(evidence)
    assert found, "rg never ran"
    assert leaked(found) == []


class Reviewer:
    """The integrator's subagent runner: the review child answers at once."""

    @hookimpl
    def callgate_subagent_runner(self, session: Any) -> Any:
        return self

    async def run(self, request: Any) -> Any:
        return SubagentOutcome(status="completed", answer="reviewed")


def planted_git(tmp_path: Path, evidence: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host's git (first on PATH) is the planted recorder."""
    git = planted(tmp_path / "host-git", "git", recorder(evidence))
    monkeypatch.setenv("PATH", os.pathsep.join([str(git.parent), os.environ["PATH"]]))


def test_attack_host_secrets_reach_reviews_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               callgate_session: Any) -> None:
    evidence = tmp_path / "evidence.jsonl"
    planted_git(tmp_path, evidence, monkeypatch)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    s = callgate_session(plugins=[callgate_tasks, Reviewer()], files={".git/HEAD": "x\n"})
    s.call("review", {"task": "review the change"})
    found = records(evidence)
    assert found, "git never ran"
    assert leaked(found) == []


# --- read-only programs write the workspace ---------------------------------------------------


@needs_bwrap
@pytest.mark.parametrize("mode", ["default", "plan"])
def test_attack_language_server_writes_the_workspace(tmp_path: Path, mode: str) -> None:
    evidence_dir = tmp_path / "evidence"
    evidence_dir.mkdir()
    evidence = evidence_dir / "evidence.jsonl"
    server = planted(tmp_path / "host-bin", "writer-server", recorder(evidence))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "x.dmp").write_text("word\n")
    replay(tmp_path, ws,
           [{"name": "lsp_hover", "arguments": {"file": "x.dmp", "line": 1, "symbol": "word"}}],
           plugins="files,lsp,sandbox",
           config=sandbox_config(evidence_dir, readable=(server.parent,))
           + f"[lsp.servers.dump]\ncommand = {toml_string(str(server))}\n"
             'extensions = [".dmp"]\n', args=("--mode", mode))
    found = records(evidence)
    assert found, "the language server never started"
    assert not (ws / "written-by-a-program.txt").exists()
    assert all(r["wrote"] is not True for r in found), found


@needs_bwrap
def test_attack_language_server_writes_the_workspace_from_a_read_only_child(
        tmp_path: Path, callgate_session: Any) -> None:
    """The same from a strict read-only child (a review or explore subagent)."""
    evidence_dir = tmp_path / "evidence"
    evidence_dir.mkdir()
    evidence = evidence_dir / "evidence.jsonl"
    server = planted(tmp_path / "host-bin", "writer-server", recorder(evidence))
    s = callgate_session(
        plugins=[callgate_lsp, callgate_sandbox], files={"x.dmp": "word\n"},
        config={"sandbox": {"enabled": True, "writable": [str(evidence_dir)],
                            "readable": [str(server.parent)]},
                "lsp": {"servers": {"dump": {"command": str(server),
                                             "extensions": [".dmp"]}}}})
    child = s.child(ChildProfile(name="explore", read_only=True))
    child.call("lsp_hover", {"file": "x.dmp", "line": 1, "symbol": "word"})
    found = records(evidence)
    assert found, "the language server never started"
    assert not s.path("written-by-a-program.txt").exists()


@needs_bwrap
def test_attack_grep_writes_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          callgate_session: Any) -> None:
    evidence_dir = tmp_path / "evidence"
    evidence_dir.mkdir()
    evidence = evidence_dir / "evidence.jsonl"
    planted_rg(tmp_path, evidence, monkeypatch)
    s = callgate_session(plugins=[callgate_search, callgate_sandbox], files={"a.txt": "alpha\n"},
                         config={"search": {"grep_engine": "rg"},
                                 "sandbox": {"enabled": True, "writable": [str(evidence_dir)],
                                             "readable": [str(tmp_path / "host-rg")]}})
    s.call("grep", {"pattern": "alpha"})
    found = records(evidence)
    assert found, "rg never ran"
    assert not s.path("written-by-a-program.txt").exists()


@needs_bwrap
def test_attack_reviews_git_writes_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 callgate_session: Any) -> None:
    evidence_dir = tmp_path / "evidence"
    evidence_dir.mkdir()
    evidence = evidence_dir / "evidence.jsonl"
    planted_git(tmp_path, evidence, monkeypatch)
    s = callgate_session(plugins=[callgate_tasks, callgate_sandbox, Reviewer()],
                         files={".git/HEAD": "x\n"},
                         config={"sandbox": {"enabled": True, "writable": [str(evidence_dir)],
                                             "readable": [str(tmp_path / "host-git")]}})
    s.call("review", {"task": "review the change"})
    found = records(evidence)
    assert found, "git never ran"
    assert not s.path("written-by-a-program.txt").exists()


# --- nothing a session started outlives it ------------------------------------------------------


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)],
                         ids=["unconfined", "sandboxed"])
def test_attack_setsid_nohup_jobs_outlive_the_session(tmp_path: Path, sandbox: bool) -> None:
    """A command keeps ``setsid nohup sleep`` (the reaping exemption), and a background job
    starts one in a session of its own; both must end when the session closes."""
    ws = tmp_path / "ws"
    ws.mkdir()
    kept, escaped = unique_sleep(), unique_sleep()
    try:
        replay(tmp_path, ws, [
            {"name": "bash", "arguments": {
                "command": f"setsid nohup {kept} >/dev/null 2>&1 &"}},
            {"name": "bash", "arguments": {
                "command": f"setsid {escaped} >/dev/null 2>&1 </dev/null & sleep 600",
                "run_in_background": True}},
            {"name": "bash", "arguments": {"command": "sleep 1"}},
        ], plugins="shell" + (",sandbox" if sandbox else ""),
            config=sandbox_config() if sandbox else "")
    finally:
        left = survivors([kept, escaped])
    assert left == []


def test_attack_mcp_servers_grandchild_outlives_the_session(tmp_path: Path) -> None:
    """An MCP server starts a grandchild in a session of its own (it leaves the server's
    process group), then serves; the grandchild must end with the session."""
    grandchild = unique_sleep()
    wrapper = planted(tmp_path / "host-bin", "forking-server", (
        "import os, subprocess, sys\n"
        f"subprocess.Popen({grandchild.split()!r}, start_new_session=True,\n"
        "                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,\n"
        "                 stderr=subprocess.DEVNULL)\n"
        f"os.execv(sys.executable, [sys.executable, {str(FIXTURE_SERVER)!r}])\n"))
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        out = replay(tmp_path, ws, [{"name": "use_capability", "arguments": {
            "action": "call", "capability_id": "mcp-server:fx"}}],
            plugins="capability",
            config=f"[mcp_servers.fx]\ncommand = {toml_string(str(wrapper))}\n",
            args=("--approve", "all"))
        assert not out["c1"]["is_error"], out["c1"]
    finally:
        left = survivors([grandchild])
    assert left == []


# --- the door itself ------------------------------------------------------------------------------


SPAWNING_MODULES = {"subprocess", "pty", "asyncio", "anyio", "os"}
SPAWNING_CALLS = {
    "subprocess": None,  # every call into subprocess
    "pty": {"spawn", "fork"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "anyio": {"open_process", "run_process"},
    "os": {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp"},
}
SPAWNING_PREFIXES = {"os": ("exec", "spawn")}
LOOP_METHODS = {"subprocess_exec", "subprocess_shell"}


def _spawn_calls(path: Path, root: Path = REPO) -> list[str]:
    """``file:line call`` for every call in ``path`` that starts a program directly."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    aliases: dict[str, tuple[str, str | None]] = {}  # local name -> (module, attribute)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for item in node.names:
                top = item.name.split(".")[0]
                if top in SPAWNING_MODULES:
                    aliases[item.asname or top] = (item.name, None)
        elif isinstance(node, ast.ImportFrom) and node.module:
            module = node.module.split(".")[0]
            if module in SPAWNING_MODULES:
                for item in node.names:
                    aliases[item.asname or item.name] = (node.module, item.name)

    def spawns(module: str, attribute: str | None) -> bool:
        module = module.split(".")[0]
        if attribute is None:
            return False
        allowed = SPAWNING_CALLS.get(module, set())
        if allowed is None:
            return attribute[:1].isalpha() and attribute not in (
                "DEVNULL", "PIPE", "STDOUT", "TimeoutExpired", "CalledProcessError",
                "SubprocessError", "CompletedProcess", "Popen")
        return attribute in allowed or attribute.startswith(SPAWNING_PREFIXES.get(module, ()))

    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = None
        if isinstance(func, ast.Attribute):
            if func.attr in LOOP_METHODS:
                name = func.attr
            elif isinstance(func.value, ast.Name) and func.value.id in aliases:
                module, attribute = aliases[func.value.id]
                if attribute is None and (spawns(module, func.attr) or
                                          (module == "subprocess" and func.attr == "Popen")):
                    name = f"{module}.{func.attr}"
            elif isinstance(func.value, ast.Attribute) and \
                    isinstance(func.value.value, ast.Name) and func.value.attr == "subprocess" \
                    and func.value.value.id in aliases:  # asyncio.subprocess.create_...
                name = f"{func.value.value.id}.subprocess.{func.attr}"
        elif isinstance(func, ast.Name) and func.id in aliases:
            module, attribute = aliases[func.id]
            if attribute is not None and (spawns(module, attribute) or
                                          (module == "subprocess" and attribute == "Popen")):
                name = f"{module}.{attribute}"
        if name is not None:
            found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return found


def test_no_plugin_contrib_package_or_example_starts_a_program_outside_the_door() -> None:
    """Every program a session starts goes through `callgate.process`; the core's door
    modules are the only places that call the standard library's spawning functions."""
    core = REPO / "core" / "callgate"
    door = {core / "process.py", core / "_pipeline" / "lifeline.py"}
    found: list[str] = []
    for top in ("plugins", "contrib", "examples", "core"):
        for path in sorted((REPO / top).rglob("*.py")):
            if path in door or ".venv" in path.parts:
                continue
            found += _spawn_calls(path)
    assert found == [], "programs started outside callgate.process:\n" + "\n".join(found)


def test_the_door_check_sees_every_spelling(tmp_path: Path) -> None:
    """The check above is not blind: each way of starting a program is reported."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import subprocess, os, pty, asyncio, anyio\n"
        "import subprocess as sp\n"
        "from subprocess import Popen, run as go\n"
        "from os import execv\n"
        "subprocess.run(['x'])\n"
        "sp.Popen(['x'])\n"
        "Popen(['x'])\n"
        "go(['x'])\n"
        "os.execvp('x', ['x'])\n"
        "execv('x', ['x'])\n"
        "os.spawnlp(0, 'x', 'x')\n"
        "os.posix_spawn('x', ['x'], {})\n"
        "os.system('x')\n"
        "pty.spawn(['x'])\n"
        "asyncio.create_subprocess_exec('x')\n"
        "asyncio.subprocess.create_subprocess_shell('x')\n"
        "anyio.open_process(['x'])\n"
        "anyio.run_process(['x'])\n"
        "loop.subprocess_exec(None, 'x')\n"
        "x = subprocess.DEVNULL\n"
        "os.path.join('a', 'b')\n")
    found = _spawn_calls(sample, tmp_path)
    assert [f.split(" ")[0] for f in found] == [f"sample.py:{n}" for n in range(5, 20)]

