"""The user config under an explicit or workspace config: where it is found, how the
layers combine, and what a workspace config the user config does not trust can change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from callgate import Host, ToolSpec, hookimpl
from callgate.host import ConfigError


class Knobs:
    """A plugin whose table declares each workspace policy once."""

    __name__ = "knobs"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add_config("knobs", {
            "type": "object", "additionalProperties": False,
            "properties": {
                "colour": {"type": "string", "default": "red", "x-workspace": "any"},
                "shade": {"type": "string", "default": "dark"},  # declares nothing
                "program": {"type": "string", "default": "sh", "x-workspace": "user"},
                "names": {"type": "array", "items": {"type": "string"}, "default": ["a"],
                          "x-workspace": "add"},
                "paths": {"type": "array", "items": {"type": "string"}, "default": [],
                          "x-workspace": "subset"},
                "level": {"enum": ["low", "mid", "high"], "default": "low",
                          "x-workspace": ["low", "mid", "high"]},
                "jobs": {"type": "integer", "default": 8, "x-workspace": "min"},
                "servers": {"type": "object", "default": {}, "x-workspace": "add",
                            "additionalProperties": {
                                "type": "object", "properties": {
                                    "cmd": {"type": "string", "x-workspace": "user"},
                                    "on": {"type": "boolean", "default": True,
                                           "x-workspace": [True, False]}}}},
                "hooks": {"type": "object", "default": {},  # a map that declares nothing
                          "additionalProperties": {"type": "string"}},
            },
        })
        registry.add(ToolSpec(name="knob", description="A knob.", read_only=True,
                              schema={"type": "object"}, execute=lambda ctx, args: "ok"))


def boot(workspace: Path | None = None, config: Any = None, **kwargs: Any) -> Host:
    return Host.boot(config, workspace=workspace, plugins=[Knobs()], entrypoints=False,
                     **kwargs)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


USER = ('[knobs]\nprogram = "bash"\nnames = ["b"]\npaths = ["/x", "/y"]\nlevel = "mid"\n'
        'jobs = 4\n[knobs.servers.mine]\ncmd = "safe"\n\n[permissions]\nmode = "ask"\n'
        'allow = ["knob"]\n')
WORKSPACE = ('[knobs]\ncolour = "blue"\nprogram = "evil"\nnames = ["c"]\n'
             'paths = ["/y", "/z"]\nlevel = "low"\njobs = 16\nshade = "light"\n'
             '[knobs.servers.mine]\ncmd = "evil"\non = false\n[knobs.servers.new]\ncmd = "x"\n\n'
             '[permissions]\nmode = "allow"\nallow = ["Bash"]\ndeny = ["knob"]\n\n'
             '[knobs.hooks]\npre = "evil"\n')


def test_the_user_config_is_found_in_callgate_config_home(user_config: Path) -> None:
    write(user_config / "config.toml", '[knobs]\ncolour = "green"\n')
    assert boot().config("knobs")["colour"] == "green"
    assert boot(user_config=False).config("knobs")["colour"] == "red"
    assert boot(user_config={"knobs": {"colour": "grey"}}).config("knobs")["colour"] == "grey"


def test_an_empty_callgate_config_home_means_no_user_config(monkeypatch: Any) -> None:
    monkeypatch.setenv("CALLGATE_CONFIG_HOME", "")
    host = boot()
    assert host.config_source.user_file is None and host.config("knobs")["colour"] == "red"


def test_an_untrusted_workspace_config_only_tightens(user_config: Path, tmp_path: Path) -> None:
    write(user_config / "config.toml", USER)
    ws = tmp_path / "ws"
    config = write(ws / "callgate.toml", WORKSPACE)
    host = boot(ws)
    knobs, perms = host.config("knobs"), host.config("permissions")
    assert knobs["colour"] == "blue"  # a preference ("any")
    assert knobs["shade"] == "dark"  # declares nothing: user only (secure by default)
    assert knobs["hooks"] == {}  # a map that declares nothing: no new entries
    assert knobs["program"] == "bash"  # user only
    assert knobs["names"] == ["b", "c"]  # may add
    assert knobs["paths"] == ["/y"]  # may narrow
    assert knobs["level"] == "mid" and knobs["jobs"] == 4  # looser: ignored
    assert knobs["servers"]["mine"] == {"cmd": "safe", "on": False}  # switched off only
    assert knobs["servers"]["new"]["cmd"] == "x"
    assert host.config_source.from_untrusted_workspace(("knobs", "servers", "new"))
    assert not host.config_source.from_untrusted_workspace(("knobs", "servers", "mine"))
    assert perms["mode"] == "ask" and perms["allow"] == ["knob"] and perms["deny"] == ["knob"]
    notes = [w for w in host.warnings if "in the workspace config is ignored" in w]
    named = {w.split(" in the workspace")[0].split(": ")[-1] for w in notes}
    assert named == {"knobs.program", "knobs.paths", "knobs.level", "knobs.jobs",
                     "knobs.shade", "knobs.hooks.pre", "knobs.servers.mine.cmd",
                     "permissions.mode", "permissions.allow"}
    assert all(w.startswith(f"{config}:") for w in notes)
    mode_note = next(w for w in notes if "permissions.mode" in w)
    assert mode_note.startswith(f"{config}:16: ") and str(user_config) in mode_note
    assert next(w for w in notes if "knobs.hooks.pre" in w).startswith(f"{config}:21: ")


def test_a_workspace_the_user_config_trusts_applies_in_full(user_config: Path,
                                                             tmp_path: Path) -> None:
    trust = f"\n[trust]\nworkspaces = [{json.dumps(str(tmp_path))}]\n"
    write(user_config / "config.toml", USER + trust)
    ws = tmp_path / "projects" / "ws"
    write(ws / "callgate.toml", WORKSPACE)
    host = boot(ws)
    knobs, perms = host.config("knobs"), host.config("permissions")
    assert knobs["program"] == "evil" and knobs["paths"] == ["/y", "/z"]
    assert knobs["level"] == "low" and knobs["jobs"] == 16
    assert perms["mode"] == "allow" and perms["allow"] == ["knob", "Bash"]
    assert not host.config_source.from_untrusted_workspace(("knobs", "servers", "new"))
    assert not any("is ignored" in w for w in host.warnings)


def test_an_explicit_config_overrides_the_user_config_and_joins_its_rules(
        user_config: Path, tmp_path: Path) -> None:
    write(user_config / "config.toml", USER)
    host = boot(config=write(tmp_path / "mine.toml", WORKSPACE))
    assert host.config("knobs")["program"] == "evil"
    assert host.config("permissions")["allow"] == ["knob", "Bash"]
    assert host.config("permissions")["deny"] == ["knob"]


def test_errors_name_the_layer_that_set_the_key(user_config: Path, tmp_path: Path) -> None:
    user = write(user_config / "config.toml", "[knobs]\njobs = \"many\"\n")
    with pytest.raises(ConfigError) as err:
        boot()
    assert (err.value.file, err.value.line) == (str(user), 2)
    write(user, "[knobs]\njobs = 2\n")
    ws = tmp_path / "ws"
    config = write(ws / "callgate.toml", "\n[knobs]\nlevel = \"extreme\"\n")
    with pytest.raises(ConfigError) as err:
        boot(ws)
    assert (err.value.file, err.value.line, err.value.key) == (str(config), 3, "knobs.level")
    write(config, '[permissions]\ndeny = ["(bad"]\n')
    with pytest.raises(ConfigError) as err:
        boot(ws)
    assert (err.value.file, err.value.line) == (str(config), 2)


def test_trust_is_read_only_from_the_user_config(user_config: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "callgate.toml", '[trust]\nworkspaces = ["/"]\n[knobs]\nprogram = "evil"\n')
    host = boot(ws)
    assert host.config("knobs")["program"] == "sh"
    assert any("[trust] is read only from the user config" in w for w in host.warnings)
