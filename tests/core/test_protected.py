"""Protected paths through the pipeline: which paths, the exceptions only the user config
makes, and the public file API refusing them too (issue 16, defect 2)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import callgate_files
import pytest
from callgate import Decision, ToolSpec, hookimpl, sync
from callgate.process import protected_paths


class ApiWriter:
    """A third-party tool that writes through ``ctx.files`` without declaring its path."""

    __name__ = "apiwriter"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(
            name="api_write", description="Write a file through ctx.files.",
            schema={"type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"]},
            execute=lambda ctx, args: str(ctx.files.write_text(args["path"], "x"))))


class Counter:
    def __init__(self) -> None:
        self.asked = 0

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any,
                                preview: Any) -> Decision:
        self.asked += 1
        return Decision("allow")


def session_on(ws: Path, *plugins: Any, **boot: Any) -> Any:
    host = sync.Host.boot(boot.pop("config", None), workspace=ws, surface="full",
                          entrypoints=False, plugins=[callgate_files, ApiWriter(), *plugins],
                          **boot)
    return host, host.open_session(ws)


def call(session: Any, name: str, **arguments: Any) -> Any:
    from callgate import ToolCall

    return session.run_batch([ToolCall("c", name, arguments)])[0]


def test_an_explicit_config_file_in_the_workspace_is_protected(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "conf").mkdir(parents=True)
    cfg = ws / "conf" / "agent.toml"
    cfg.write_text("[files]\nwatch = false\n")
    host, s = session_on(ws, config=cfg)
    assert not call(s, "read_file", path="conf/agent.toml").is_error
    r = call(s, "write_file", path="conf/agent.toml", content="[sandbox]\nenabled = false\n")
    assert r.error.signature == "FS_PROTECTED" and "config file this host reads" in r.text
    assert cfg.read_text() == "[files]\nwatch = false\n"
    host.close()


def test_a_pyproject_is_protected_only_when_it_held_the_config(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pyproject.toml").write_text('[project]\nname = "x"\n')
    host, s = session_on(ws)
    call(s, "read_file", path="pyproject.toml")
    assert not call(s, "write_file", path="pyproject.toml", content="[project]\n").is_error
    host.close()
    (ws / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.callgate.files]\n'
                                       "watch = false\n")
    host, s = session_on(ws)
    call(s, "read_file", path="pyproject.toml")
    r = call(s, "write_file", path="pyproject.toml", content="[project]\n")
    assert r.error.signature == "FS_PROTECTED"
    host.close()


def test_callgate_toml_is_protected_even_before_it_exists(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    host, s = session_on(ws)
    r = call(s, "write_file", path="callgate.toml", content="[sandbox]\nenabled = false\n")
    assert r.error.signature == "FS_PROTECTED" and not (ws / "callgate.toml").exists()
    r = call(s, "write_file", path="sub/callgate.toml", content="x")  # not read by anyone
    assert not r.is_error
    host.close()


def test_the_user_config_file_is_protected_even_before_it_exists(tmp_path: Path,
                                                                 monkeypatch: Any) -> None:
    """A workspace that holds the user config directory (a session in ``~``): creating
    ``config.toml`` there would be the next session's trusted user config."""
    ws = tmp_path / "ws"
    home = ws / ".config" / "callgate"
    home.mkdir(parents=True)
    monkeypatch.setenv("CALLGATE_CONFIG_HOME", str(home))
    host, s = session_on(ws)
    r = call(s, "write_file", path=".config/callgate/config.toml",
             content=f'[trust]\nworkspaces = ["{ws}"]\n')
    assert r.error.signature == "FS_PROTECTED" and "config file this host reads" in r.text
    assert not (home / "config.toml").exists()
    assert not call(s, "write_file", path=".config/callgate/notes.txt", content="x").is_error
    host.close()


def test_callgate_toml_anywhere_the_user_trusts_is_protected(tmp_path: Path,
                                                             user_config: Path) -> None:
    """Trust covers the directories below a listed one: a ``callgate.toml`` the model
    creates in one of them would apply in full when callgate is started there."""
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (user_config / "config.toml").write_text(f"[trust]\nworkspaces = [{str(ws)!r}]\n")
    host, s = session_on(ws)
    r = call(s, "write_file", path="pkg/callgate.toml", content="[sandbox]\nenabled = false\n")
    assert r.error.signature == "FS_PROTECTED" and "trusts this directory" in r.text
    assert not (ws / "pkg" / "callgate.toml").exists()
    host.close()


def test_the_public_file_api_refuses_protected_paths(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    host, s = session_on(ws)
    r = call(s, "api_write", path=".git/hooks/pre-push")
    assert r.error.kind == "blocked" and r.error.signature == "FS_PROTECTED"
    assert not (ws / ".git" / "hooks" / "pre-push").exists()
    assert not call(s, "api_write", path="ok.txt").is_error
    host.close()


def test_a_symlink_to_a_protected_path_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "innocent.txt").symlink_to(".git/config")
    (ws / "dir").symlink_to(".git")
    host, s = session_on(ws)
    for path in ("innocent.txt", "dir/config"):
        call(s, "read_file", path=path)
        r = call(s, "edit_file", path=path, old_string="[core]", new_string="[alias]")
        assert r.error.signature == "FS_PROTECTED", r.text
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    host.close()


def test_an_ask_for_a_protected_path_is_refused_before_anyone_is_asked(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    counter = Counter()
    host, s = session_on(ws, ("counter", counter), config={"permissions": {"mode": "ask"}})
    r = call(s, "write_file", path="callgate.toml", content="x")
    assert r.error.signature == "FS_PROTECTED" and counter.asked == 0
    assert not call(s, "write_file", path="fine.txt", content="x").is_error
    assert counter.asked == 1
    host.close()


def test_only_the_user_config_can_allow_a_protected_path(tmp_path: Path,
                                                          user_config: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "callgate.toml").write_text('[files]\nallow_protected = [".git/hooks/**"]\n'
                                      'protected = ["docs/**"]\n')
    host, s = session_on(ws)
    assert call(s, "write_file", path=".git/hooks/pre-commit", content="x").error
    assert call(s, "write_file", path="docs/a.md", content="x").error.signature == \
        "FS_PROTECTED"
    assert any("files.allow_protected in the workspace config is ignored" in w
               for w in host.host.warnings)
    host.close()
    (user_config / "config.toml").write_text('[files]\nallow_protected = [".git/hooks/**"]\n')
    host, s = session_on(ws)
    assert not call(s, "write_file", path=".git/hooks/pre-commit", content="x").is_error
    assert call(s, "write_file", path=".git/config", content="x").error.signature == \
        "FS_PROTECTED"
    host.close()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_core_hooks_path_in_the_workspace_is_protected(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "config", "core.hooksPath", ".husky"], check=True)
    (ws / ".husky").mkdir()
    host, s = session_on(ws)
    r = call(s, "write_file", path=".husky/pre-commit", content="#!/bin/sh\n")
    assert r.error.signature == "FS_PROTECTED" and "core.hooksPath" in r.text
    assert str(ws / ".husky") in protected_paths(s.session)
    host.close()


def test_protected_paths_lists_what_exists_for_the_sandbox(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for rel in (".git/hooks", ".git/modules/sub/hooks", ".callgate", "keep"):
        (ws / rel).mkdir(parents=True)
    for rel in (".git/config", ".git/modules/sub/config", "callgate.toml", "keep/a.txt"):
        (ws / rel).write_text("")
    (ws / "callgate.toml").write_text("[files]\nprotected = [\"keep/*\"]\n")
    host, s = session_on(ws)
    found = {str(Path(p).relative_to(ws)) for p in protected_paths(s.session)}
    assert found == {".git/hooks", ".git/config", ".git/modules/sub/hooks",
                     ".git/modules/sub/config", ".callgate", "callgate.toml", "keep/a.txt"}
    host.close()
