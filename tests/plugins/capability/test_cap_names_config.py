"""Permission names of MCP capabilities and the [mcp_servers] / [capability] tables (§5)."""

from __future__ import annotations

import sys

import callgate_capability
import pytest
from callgate import Host
from callgate.host import BootError
from callgate_capability import MCP_SERVERS
from callgate_capability._names import fnv1a_32, norm, tool_permission_name

from .helpers import ToolsPlugin, boot, config, doc, fixture_server, uc


def test_norm_keeps_safe_names_and_tags_changed_ones():
    """§9.24"""
    assert norm("files.read") == "files_read_feef31"
    assert norm("ok_name") == "ok_name"
    assert norm("...").startswith("unnamed_")
    assert norm("a b/c") == "a_b_c_" + f"{fnv1a_32(b'a b/c'):08x}"[:6]
    assert norm("-dash-") == "-dash-"
    assert norm("_x_") == "x_" + f"{fnv1a_32(b'_x_'):08x}"[:6]
    assert norm("files.read") != norm("files_read")
    assert tool_permission_name("git", "git_status") == "mcp__git__git_status"
    assert callgate_capability.connect_permission_name("git") == "mcp_connect__git"


@pytest.mark.parametrize("name", ["bad__name", "trailing_", "_lead", "x" * 65, "sp ace"])
def test_bad_server_names_fail_boot(name, tmp_path):
    cfg = config(tmp_path, {name: {"command": sys.executable}})
    with pytest.raises(BootError):
        Host.boot(cfg, plugins=[callgate_capability], entrypoints=False)


@pytest.mark.parametrize("table", [
    {"args": []},                                        # command missing
    {"command": "x", "startup_timeout_s": 0},            # below 1
    {"command": "x", "call_timeout_s": 3601},            # above 3600
    {"command": "x", "colour": "blue"},                  # unknown key
    {"command": "x", "env": {"A": 1}},                   # env values are strings
])
def test_bad_server_tables_fail_boot_naming_the_key(table, tmp_path):
    with pytest.raises(BootError, match="mcp_servers"):
        Host.boot(config(tmp_path, {"srv": table}), plugins=[callgate_capability],
                  entrypoints=False)


def test_config_file_errors_name_file_and_line(tmp_path):
    path = tmp_path / "callgate.toml"
    path.write_text('[mcp_servers.srv]\ncommand = "x"\nstartup_timeout_s = 900\n')
    with pytest.raises(BootError) as info:
        Host.boot(path, plugins=[callgate_capability], entrypoints=False)
    assert "callgate.toml:3" in str(info.value)


def test_defaults_and_cwd_relative_to_the_workspace(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path, cwd="sub")})
    cfg = s.sync.extension(MCP_SERVERS).config("fixture")
    assert cfg.cwd == str(s.workspace / "sub")
    assert (cfg.enabled, cfg.auto_start, cfg.trusted) == (True, False, True)
    assert (cfg.startup_timeout_s, cfg.call_timeout_s) == (30, 120)
    r = uc(s, action="call", capability_id="mcp-server:fixture")
    assert 'working directory "' in r.text and "does not exist" in r.text
    (s.workspace / "sub").mkdir()
    assert doc(uc(s, action="call", capability_id="mcp-server:fixture"))["status"] == \
        "connected"


def test_identity_changes_with_command_args_env_names_and_cwd(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path,
                                                                   env={"A": "1"})})
    servers = s.sync.extension(MCP_SERVERS)
    base = servers.config("fixture").identity
    assert servers.reconfigure("fixture", env={"A": "2"}).identity == base  # values don't count
    assert servers.reconfigure("fixture", env={"B": "1"}).identity != base
    servers.reconfigure("fixture", env={"A": "1"})
    assert servers.reconfigure("fixture", cwd="elsewhere").identity != base
    assert servers.reconfigure("fixture", cwd="").identity == base
    assert servers.reconfigure("fixture", enabled=False).identity == base
    assert servers.reconfigure("fixture", command="python3").identity != base


def test_unreadable_or_unknown_cache_files_count_as_absent(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    identity = s.sync.extension(MCP_SERVERS).config("fixture").identity
    path = tmp_path / "cache" / "mcp" / f"{identity}.json"
    path.parent.mkdir(parents=True)
    for content in ("{not json", '{"version": 99, "tools": []}', '["a list"]'):
        path.write_text(content)
        r = doc(uc(s, action="inspect", capability_id="mcp-server:fixture"))
        assert r["source"] == "none"


def test_the_default_cache_dir_is_the_user_cache_dir(callgate_session, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(sys, "platform", "linux")
    s = callgate_session(plugins=[callgate_capability, ToolsPlugin()],
                         config={"mcp_servers": {"fixture": fixture_server(tmp_path)}})
    servers = s.sync.extension(MCP_SERVERS)
    assert servers.cache.directory == str(tmp_path / "xdg" / "callgate" / "mcp")
