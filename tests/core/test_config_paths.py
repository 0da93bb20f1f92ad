"""Path-typed config keys: a value no path can be is a one-line config error naming the key
(issue 36, item 17).

A NUL byte in ``[workspace] extra_roots`` used to crash boot with a traceback (the value
reached ``os.path.realpath``); a relative extra root was silently taken from the workspace,
a relative ``[capability] cache_dir`` from the process's working directory. Every key
whose schema says ``"x-kind": "path"`` is found here from the installed plugins (a new
one is covered without editing this file) and held to one rule: absolute (``~``
expands) unless the key declares what a relative value is relative to (``x-relative-to``),
no control character, no empty list entry; and no config string anywhere holds a NUL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from callgate import Host
from callgate._config.paths import RELATIVE_TO
from callgate.host import ConfigError
from callgate_mcp_serve import ElicitationApprover

from tests.trust.config_attacks import walk_keys


def _path_keys() -> list[tuple[tuple[str, ...], Mapping[str, Any], Mapping[str, Any]]]:
    """``(key path, its schema, the schema of the map entry holding it or {})`` of every
    path-typed key of every installed plugin."""
    host = Host.boot(user_config=False, plugins=[ElicitationApprover()])
    found = []
    for table, (_plugin, schema) in host.registry.config_schemas.items():
        for path, sub, _user in walk_keys(schema, (table,)):
            if sub.get("x-kind") == "path":
                entry: Mapping[str, Any] = {}
                if "<*>" in path:
                    node: Any = schema
                    for part in path[1:path.index("<*>")]:
                        node = node["properties"][part]
                    entry = node["additionalProperties"]
                found.append((path, sub, entry))
    return found


PATH_KEYS = _path_keys()


def _config_with(path: tuple[str, ...], schema: Mapping[str, Any], entry: Mapping[str, Any],
                 value: str) -> tuple[dict[str, Any], str]:
    """A config mapping setting ``path`` to ``value`` (a list of it for a list key), and the
    key an error names."""
    leaf: Any = [value] if schema.get("type") == "array" else value
    key = ".".join(p if p != "<*>" else "x" for p in path) + \
        ("[0]" if schema.get("type") == "array" else "")
    if "<*>" in path:
        filled = {name: "/bin/true" for name in entry.get("required", ())}
        leaf = {**filled, path[-1]: leaf}
        path = path[:path.index("<*>") + 1]
    config: dict[str, Any] = {}
    node = config
    for part in path[:-1]:
        node = node.setdefault("x" if part == "<*>" else part, {})
    node["x" if path[-1] == "<*>" else path[-1]] = leaf
    return config, key


def _boot_error(config: dict[str, Any], tmp_path: Path) -> ConfigError | None:
    try:
        Host.boot(config=config, workspace=tmp_path, user_config=False,
                  plugins=[ElicitationApprover()])
    except ConfigError as exc:
        return exc
    return None


def test_the_installed_plugins_have_the_path_keys_this_file_expects() -> None:
    keys = {".".join(p) for p, _s, _e in PATH_KEYS}
    assert {"workspace.extra_roots", "workspace.extra_read_roots", "capability.cache_dir",
            "mcp_servers.<*>.cwd", "memory.project_dir", "memory.global_dir", "skills.paths",
            "docs.paths", "web.ca_bundle", "sandbox.writable", "sandbox.readable"} <= keys


@pytest.mark.parametrize("bad", ["/tmp/a\x00b", "/tmp/a\nb", "rel\tx"],
                         ids=["nul", "newline", "tab"])
@pytest.mark.parametrize(("path", "schema", "entry"), PATH_KEYS,
                         ids=lambda x: ".".join(x) if isinstance(x, tuple) else "")
def test_a_path_no_file_can_have_is_a_config_error_naming_the_key(
        path, schema, entry, bad, tmp_path) -> None:
    config, key = _config_with(path, schema, entry, bad)
    err = _boot_error(config, tmp_path)
    assert err is not None, f"{key} = {bad!r} booted"
    assert err.key == key
    assert "NUL byte" in err.reason or "control character" in err.reason
    assert "\n" not in str(err)


@pytest.mark.parametrize(("path", "schema", "entry"), PATH_KEYS,
                         ids=lambda x: ".".join(x) if isinstance(x, tuple) else "")
def test_a_relative_path_is_an_error_unless_the_key_says_relative_to_what(
        path, schema, entry, tmp_path) -> None:
    config, key = _config_with(path, schema, entry, "relative/dir")
    err = _boot_error(config, tmp_path)
    base = schema.get(RELATIVE_TO)
    if base in ("workspace", "state directory"):
        # documented: relative to the workspace, or to the state directory
        assert err is None or err.key != key, str(err)
        return
    assert err is not None and err.key == key, f"{key} = 'relative/dir' booted"
    if base == "config file":  # a mapping is no file to be relative to
        assert "this config is not a file it could be relative to" in err.reason
    else:
        assert "'relative/dir' is not an absolute path" in err.reason


@pytest.mark.parametrize(("path", "schema", "entry"),
                         [k for k in PATH_KEYS if k[1].get("type") == "array"],
                         ids=lambda x: ".".join(x) if isinstance(x, tuple) else "")
def test_an_empty_entry_in_a_list_of_paths_is_an_error(path, schema, entry, tmp_path) -> None:
    config, key = _config_with(path, schema, entry, "")
    err = _boot_error(config, tmp_path)
    assert err is not None and err.key == key
    # the schema's own minLength, where the key has one, says it first
    assert "an empty path names nothing" in err.reason or "should be non-empty" in err.reason


def test_a_nul_in_any_config_string_is_an_error(tmp_path) -> None:
    err = _boot_error({"permissions": {"deny": ["Bash(rm\x00 -rf)"]}}, tmp_path)
    assert err is not None and err.key == "permissions.deny[0]"
    assert "holds a NUL byte" in err.reason
    err = _boot_error({"files": {"encodings": {"a\x00b": "cp1251"}}}, tmp_path)
    assert err is not None and err.key == "files.encodings.a\x00b"


# --- through the front door: callgate call -----------------------------------------------


def _call(workspace: Path, config: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CALLGATE_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "callgate_cli", "call", "read_file",
                           '{"path": "a.txt"}',
                           "--workspace", str(workspace), "--config", str(config)],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize(("toml", "where", "says"), [
    ('[workspace]\nextra_roots = ["/tmp/a\\u0000b"]\n', ":2: workspace.extra_roots[0]: ",
     "'/tmp/a\\x00b' holds a NUL byte, which no path can"),
    ('[workspace]\nextra_read_roots = [\n  "/tmp",\n  "../sibling",\n]\n',
     ":4: workspace.extra_read_roots[1]: ", "'../sibling' is not an absolute path"),
    ('[capability]\ncache_dir = "cache"\n', ":2: capability.cache_dir: ",
     "'cache' is not an absolute path"),
    ('[memory]\nproject_dir = "mem\\nory"\n', ":2: memory.project_dir: ",
     "holds a control character (U+000A)"),
])
def test_callgate_call_answers_one_config_line_and_changes_nothing(
        toml: str, where: str, says: str, tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "a.txt").write_text("x")
    config = tmp_path / "bad.toml"
    config.write_text(toml)
    proc = _call(ws, config, home)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [f"callgate: {config}{where}{lines[0].split(where, 1)[1]}"], proc.stderr
    assert says in lines[0]
    assert proc.stdout == ""
    assert sorted(os.listdir(ws)) == ["a.txt"] and os.listdir(home) == []


def test_callgate_call_takes_relative_paths_where_the_key_says_from_what(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "skills").mkdir(parents=True)
    (ws / "a.txt").write_text("x")
    home.mkdir()
    config = tmp_path / "ok.toml"
    config.write_text(f'[skills]\npaths = ["skills"]\n[memory]\nproject_dir = ".facts"\n'
                      f'[web]\nca_bundle = "ca.pem"\n'
                      f'[workspace]\nextra_read_roots = [{json.dumps(str(tmp_path))}]\n')
    proc = _call(ws, config, home)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["content"] == "1→x"
