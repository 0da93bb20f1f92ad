"""Honest boot (issue 17): a plugin name that names nothing installed fails boot with close
matches; a surface change forced by the config is said without ``-v``; what
``providers.surface(host)`` and ``callgate tools`` list is what a session can have; a host
without tool plugins says so."""

from __future__ import annotations

import json
import os
from pathlib import Path

import callgate_providers as providers
import pytest
from callgate import Host
from callgate.host import BootError, ConfigError

from .plugin_dist import callgate

BASE_ENV = {k: v for k, v in os.environ.items()
            if k not in ("CALLGATE_LOAD_PLUGINS", "CALLGATE_DISABLE_PLUGINS")}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("CALLGATE_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("CALLGATE_DISABLE_PLUGINS", raising=False)
    return monkeypatch


@pytest.mark.parametrize(("key", "typo", "meant"), [("enable", "filez", "files"),
                                                    ("block", "shel", "shell")])
def test_a_misspelled_plugin_in_the_config_fails_boot_naming_file_key_and_line(
        clean_env, tmp_path: Path, key: str, typo: str, meant: str) -> None:
    config = tmp_path / "callgate.toml"
    config.write_text(f'[plugins]\n{key} = [\n  "capability",\n  "{typo}",\n]\n',
                      encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        Host.boot(config)
    text = str(err.value)
    assert text.startswith(f"{config}:4: plugins.{key}: '{typo}' is not an installed plugin")
    assert f"did you mean {meant}?" in text and "installed plugins: " in text


@pytest.mark.parametrize(("variable", "typo", "meant"), [
    ("CALLGATE_LOAD_PLUGINS", "filez", "files"), ("CALLGATE_DISABLE_PLUGINS", "shel", "shell")])
def test_a_misspelled_plugin_in_the_environment_fails_boot(clean_env, variable: str,
                                                           typo: str, meant: str) -> None:
    clean_env.setenv(variable, f"search,{typo}")
    with pytest.raises(BootError, match=rf"^{variable} names '{typo}', which is not an "
                                        rf"installed plugin; did you mean {meant}\?"):
        Host.boot({})


def test_an_unknown_entry_point_asked_for_in_code_fails_boot(clean_env) -> None:
    with pytest.raises(BootError, match=r"entrypoints=\.\.\.\) names 'serch'.*did you mean "
                                        r"search\?"):
        Host.boot({}, entrypoints=["serch"])


def test_typos_fail_the_cli_with_exit_2_and_the_message(tmp_path: Path) -> None:
    env = {**BASE_ENV, "CALLGATE_LOAD_PLUGINS": "filez"}
    proc = callgate("replay", "-", "--workspace", str(tmp_path), env=env,
                    stdin='{"id": "c1", "name": "read_file", "arguments": {"path": "x"}}\n')
    assert proc.returncode == 2 and proc.stdout == ""
    assert "CALLGATE_LOAD_PLUGINS names 'filez'" in proc.stderr
    assert "did you mean files?" in proc.stderr


def test_a_surface_forced_by_the_config_is_a_warning_without_verbose(tmp_path: Path) -> None:
    config = tmp_path / "callgate.toml"
    config.write_text('[plugins]\nenable = ["files", "search"]\n', encoding="utf-8")
    proc = callgate("tools", "--config", str(config), env=BASE_ENV)
    assert proc.returncode == 0, proc.stderr
    assert "callgate: warning: the capability plugin is not loaded" in proc.stderr
    assert "the surface mode is full" in proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()][:3] == \
        ["edit_file", "read_file", "write_file"]  # the full surface, in surface order
    verbose = callgate("-v", "tools", "--config", str(config), env=BASE_ENV)
    assert verbose.stderr.count("the capability plugin is not loaded") == 1  # said once


def test_tools_that_need_a_missing_integrator_hook_are_not_listed(clean_env, tmp_path) -> None:
    host = Host.boot({}, entrypoints=["workflow", "tasks", "capability"])
    listed = host.visible_names()
    assert "compress" not in listed and "use_capability" in listed
    assert set(host.unhooked()) == {"compress", "task", "parallel_tasks",
                                    "read_subagent_result", "read_only_task", "explore",
                                    "research", "review", "security_review", "fleet",
                                    "fleet_output"}
    assert host.unhooked()["compress"] == ("callgate_session_conversation",
                                           "callgate_session_summarizer")
    assert "compress" in host.visible_names(assume_hooks=True)  # the contract's view
    assert not {"compress", "task"} & {t["name"] for t in providers.surface(host, "anthropic")}
    env = {**BASE_ENV, "CALLGATE_LOAD_PLUGINS": "workflow,tasks,capability"}
    proc = callgate("tools", "--surface", "full", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert "compress" not in names and "task" not in names and "todo_write" in names
    assert ("callgate: not listed: compress (needs an implementation of "
            "callgate_session_conversation, callgate_session_summarizer") in proc.stderr


def test_a_host_without_tool_plugins_says_so(tmp_path: Path) -> None:
    env = {**BASE_ENV, "CALLGATE_LOAD_PLUGINS": ""}
    demo = callgate("demo", env=env)
    assert demo.returncode == 2
    assert "no tool plugin is installed" in demo.stderr and 'callgate[all]' in demo.stderr
    assert "unknown tool" not in demo.stdout
    replay = callgate("replay", "-", "--workspace", str(tmp_path), env=env,
                      stdin='{"id": "c1", "name": "read_file", "arguments": {"path": "x"}}\n')
    assert replay.returncode == 0  # the replay format is kept: one result per call
    [line] = [json.loads(x) for x in replay.stdout.splitlines()]
    assert line["error"]["kind"] == "unknown_tool"
    assert "callgate: warning: no tool plugin is installed" in replay.stderr


def test_serve_says_when_no_tool_plugin_is_installed(tmp_path: Path) -> None:
    pytest.importorskip("callgate_mcp_serve")
    env = {**BASE_ENV, "CALLGATE_LOAD_PLUGINS": ""}
    serve = callgate("serve", "--workspace", str(tmp_path), env=env, stdin="")
    assert "no tool plugin is installed" in serve.stderr
