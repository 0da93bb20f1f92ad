"""A bad ``callgate.toml`` is one clear error naming file, key and line; boot stops there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from callgate import Host, ToolSpec, hookimpl
from callgate.host import ConfigError

from .plugin_dist import callgate, make_plugin


class Gizmo:
    """A plugin with a config table of its own."""

    __name__ = "gizmo"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add_config("gizmo", {
            "type": "object", "additionalProperties": False,
            "properties": {
                "size": {"type": "integer", "minimum": 1, "default": 3},
                "names": {"type": "array", "items": {"type": "string"}, "default": []},
            },
        })
        registry.add(ToolSpec(name="gizmo", description="A gizmo.", read_only=True,
                              schema={"type": "object"}, execute=lambda ctx, args: "ok"))


def boot(tmp_path: Path, text: str, name: str = "callgate.toml") -> Host:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return Host.boot(path, plugins=[Gizmo()], entrypoints=False)


def error_of(tmp_path: Path, text: str, name: str = "callgate.toml") -> ConfigError:
    with pytest.raises(ConfigError) as err:
        boot(tmp_path, text, name)
    return err.value


# (config text, key, line, words in the reason)
CASES = [
    ('[permissions]\nmode = ask\n', "permissions.mode", 2, "not valid TOML"),
    ('[permissions]\nmode = "ask"\nmode = "deny"\n', "permissions.mode", 3, "not valid TOML"),
    ('[permissions]\ndeny = [\n  "a",\n  b,\n]\n', "permissions.deny", 4, "not valid TOML"),
    ('[results]\nmax_chars = 40000\n[results]\n', "results", 3, "not valid TOML"),
    ('[results]\nmax_chars = [1,\n', "results.max_chars", 2, "not valid TOML"),
    ('[results]\nmax_chars = "big"\n', "results.max_chars", 2,
     "must be an integer, not a string"),
    ('[results]\n# the limit\nmax_chars = 10\n', "results.max_chars", 3, "must be >= 1000"),
    ('[results]\nmax_chars = 1.5e4\n', "results.max_chars", 2, "not a float"),
    ('[permissions]\nmode = "sometimes"\n', "permissions.mode", 2,
     'must be one of "allow", "ask", "deny"'),
    ('[permissions]\nmode = "ask"\nmodes = "deny"\n', "permissions.modes", 3,
     "unknown key; known keys here: allow, ask, ask_without_approver, deny, examples, mode"),
    ('[permissions]\ndeny = ["Bash", 5]\n', "permissions.deny[1]", 2,
     "must be a string, not an integer"),
    ('permissions = 5\n', "permissions", 1, "must be a table"),
    ('permissions = { mode = 1 }\n', "permissions.mode", 1, "must be one of"),
    ('mode = "ask"\n', "mode", 1, "unknown top-level key"),
    ('[permisions]\nmode = "ask"\n', "permisions", 1, "did you mean [permissions]?"),
    ('[surface]\nmode = "lean"\n\n[gizmo]\nsize = "big"\n', "gizmo.size", 5,
     "must be an integer"),
    ('[gizmo]\nsize = 2\ncolour = "red"\n', "gizmo.colour", 3, "known keys here: names, size"),
    ('[gizmo]\nnames = ["a",\n  2]\n', "gizmo.names[1]", 2, "must be a string"),
]


@pytest.mark.parametrize(("text", "key", "line", "reason"), CASES)
def test_bad_config_names_file_key_and_line(tmp_path: Path, text: str, key: str, line: int,
                                            reason: str) -> None:
    err = error_of(tmp_path, text)
    path = str(tmp_path / "callgate.toml")
    assert (err.file, err.key, err.line) == (path, key, line), str(err)
    assert reason in err.reason
    assert str(err) == f"{path}:{line}: {key}: {err.reason}"


def test_pyproject_table_errors_name_the_full_key(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.callgate.permissions]\nmode = "maybe"\n',
        encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        Host.boot(None, workspace=tmp_path, plugins=[Gizmo()], entrypoints=False)
    assert err.value.key == "tool.callgate.permissions.mode" and err.value.line == 5


def test_good_config_boots_with_defaults_and_an_unclaimed_table_only_warns(tmp_path) -> None:
    host = boot(tmp_path, '[gizmo]\nsize = 7\n\n[someone_elses_plugin]\nx = 1\n')
    assert host.config("gizmo") == {"size": 7, "names": []}
    assert host.config("permissions")["mode"] == "allow"
    assert host.config("results") == {"max_chars": 30000, "store_max_bytes": 268435456}
    [warning] = [w for w in host.warnings if "someone_elses_plugin" in w]
    assert warning.startswith(f"{tmp_path / 'callgate.toml'}:4: ")


def test_a_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the config file"):
        Host.boot(tmp_path / "nope.toml", entrypoints=False)


def test_replay_exits_2_on_a_bad_config(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "callgate.toml").write_text('[permissions]\nmode = "sometimes"\n')
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"id": "c1", "name": "tally", "arguments": {}}) + "\n")
    env = make_plugin(tmp_path, "configtest", "from tests.core.test_config import Gizmo\n"
                      "plugin = Gizmo()\n")
    proc = callgate("replay", str(transcript), "--workspace", str(workspace), env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"{workspace / 'callgate.toml'}:2: permissions.mode: must be one of" in proc.stderr

    bad = tmp_path / "bad.toml"
    bad.write_text("[results\n")
    proc = callgate("replay", str(transcript), "--workspace", str(workspace), "--config",
                    str(bad), env=env)
    assert proc.returncode == 2 and f"{bad}:1: " in proc.stderr and "not valid TOML" in \
        proc.stderr
