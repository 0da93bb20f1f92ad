"""The plugin manifest (issue 38): ``callgate tools`` lists from what plugins declared,
kept in the user's state directory, without importing a plugin; any change to what is
installed, to a plugin's config or to what it probed makes the plugin answer again, and a
manifest someone else could have written is never read.

Each test installs a small plugin (``cg_probe``, a ``*.dist-info`` on ``PYTHONPATH``) and
runs the command line in a fresh process, as a user would, with only that plugin loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from callgate import Host
from callgate.host import BootError

PLUGIN = '''
import os

from callgate import ToolSpec, hookimpl

SCHEMA = {"type": "object", "additionalProperties": False,
          "properties": {"loud": {"type": "boolean", "default": False},
                         "label": {"type": "string", "default": ""}}}


@hookimpl
def callgate_register_tools(registry):
    config = registry.add_config("probe", SCHEMA)
    # what it probes decides what it declares: a variable, a file there or not
    flavor = os.environ.get("CG_PROBE_FLAVOR", "")
    marked = os.path.isfile(os.path.join(os.environ.get("CG_PROBE_DIR", "/nonexistent"), "mark"))
    description = %r if not config["loud"] else "LOUD probe."
    description = description.replace(" tool", f" {flavor} tool" if flavor else " tool")
    if marked:
        description = "Marked. " + description
    registry.add(ToolSpec(
        name="probe_tool", description=description,
        read_only=True, visibility="surface", execute=lambda ctx, args: "ok",
        schema={"type": "object", "properties": {"word": {"type": "string"}}}))
'''

RUN = """
import contextlib, io, json, sys
from callgate_cli.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(),
                  "plugin": "cg_probe" in sys.modules,
                  "jsonschema": "jsonschema" in sys.modules}))
"""


def _install(site: Path, description: str = "A probe tool. It answers ok.") -> None:
    (site / "cg_probe").mkdir(parents=True, exist_ok=True)
    (site / "cg_probe" / "__init__.py").write_text(PLUGIN % description)
    info = site / "cg_probe-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cg-probe\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[callgate]\nprobe = cg_probe\n")
    (info / "RECORD").write_text(f"cg_probe/__init__.py,,{len(description)}\n")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    found = tmp_path / "site"
    _install(found)
    return found


def _env(site: Path, **variables: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(site), "CALLGATE_LOAD_PLUGINS": "probe",
            "CG_PROBE_DIR": str(site), **variables}


def _tools(site: Path, cwd: Path, *args: str, **variables: str) -> dict[str, Any]:
    env = _env(site, **variables)
    done = subprocess.run([sys.executable, "-c", RUN, "tools", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _manifest() -> Path:
    return Path(os.environ["CALLGATE_HOME"]) / "plugin-manifest.json"


def test_a_warm_manifest_lists_without_importing_the_plugin(site: Path, tmp_path: Path) -> None:
    first = _tools(site, tmp_path)
    assert first["code"] == 0 and first["plugin"]  # no manifest yet: the plugin answers
    assert "probe_tool" in first["out"] and _manifest().is_file()
    assert _manifest().stat().st_mode & 0o077 == 0  # the user's only
    again = _tools(site, tmp_path)
    assert not again["plugin"] and not again["jsonschema"]
    assert (again["out"], again["err"]) == (first["out"], first["err"])
    as_json = _tools(site, tmp_path, "--json")
    assert not as_json["plugin"]
    assert json.loads(as_json["out"])[0]["schema"]["properties"] == {"word": {"type": "string"}}


def test_a_changed_distribution_is_imported_again(site: Path, tmp_path: Path) -> None:
    _tools(site, tmp_path)
    assert not _tools(site, tmp_path)["plugin"]
    _install(site, "An upgraded probe. It answers ok.")  # RECORD changes with the upgrade
    upgraded = _tools(site, tmp_path)
    assert upgraded["plugin"] and "An upgraded probe" in upgraded["out"]
    again = _tools(site, tmp_path)
    assert not again["plugin"] and "An upgraded probe" in again["out"]


def test_what_a_plugin_probed_is_looked_at_again(site: Path, tmp_path: Path) -> None:
    _tools(site, tmp_path)
    assert not _tools(site, tmp_path)["plugin"]
    flavored = _tools(site, tmp_path, CG_PROBE_FLAVOR="minty")  # a variable it read
    assert flavored["plugin"] and "A probe minty tool" in flavored["out"]
    assert not _tools(site, tmp_path, CG_PROBE_FLAVOR="minty")["plugin"]
    plain = _tools(site, tmp_path)  # both environments keep their declarations
    assert not plain["plugin"] and "A probe tool" in plain["out"]
    (site / "mark").write_text("")  # a file it looked for, found missing before
    marked = _tools(site, tmp_path)
    assert marked["plugin"] and "Marked" in marked["out"]
    again = _tools(site, tmp_path, UNRELATED_VARIABLE="x")  # a variable it never read
    assert not again["plugin"] and "Marked" in again["out"]


def test_a_broken_upgrade_fails_naming_the_plugin(site: Path, tmp_path: Path) -> None:
    _tools(site, tmp_path)
    (site / "cg_probe" / "__init__.py").write_text("raise ImportError('half installed')\n")
    (site / "cg_probe-1.0.dist-info" / "RECORD").write_text("cg_probe/__init__.py,,1\n")
    env = _env(site)
    done = subprocess.run([sys.executable, "-m", "callgate_cli", "tools"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "plugin probe (cg-probe) failed to load" in done.stderr
    assert "half installed" in done.stderr


def test_the_users_config_applies_to_a_warm_manifest(site: Path, tmp_path: Path,
                                                     user_config: Path) -> None:
    _tools(site, tmp_path)
    (user_config / "config.toml").write_text('[surface]\nhide = ["probe_tool"]\n')
    hidden = _tools(site, tmp_path)
    assert not hidden["plugin"] and "probe_tool" not in hidden["out"]
    # the plugin's own table: what it declares for it is not known, so it answers
    (user_config / "config.toml").write_text("[probe]\nloud = true\n")
    loud = _tools(site, tmp_path)
    assert loud["plugin"] and "LOUD probe" in loud["out"]
    again = _tools(site, tmp_path)  # both declarations are kept now
    assert not again["plugin"] and "LOUD probe" in again["out"]
    (user_config / "config.toml").write_text("")
    quiet = _tools(site, tmp_path)
    assert not quiet["plugin"] and "A probe tool" in quiet["out"]


def test_a_bad_plugin_config_still_fails_from_a_warm_manifest(site: Path, tmp_path: Path,
                                                             user_config: Path) -> None:
    _tools(site, tmp_path)
    (user_config / "config.toml").write_text("[probe]\nloud = 3\n")
    env = _env(site)
    done = subprocess.run([sys.executable, "-m", "callgate_cli", "tools"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "probe.loud" in done.stderr


def _doctored(drop_schema: bool = False) -> dict[str, Any]:
    """The manifest with a tool added (or the plugin's config schema dropped)."""
    data = json.loads(_manifest().read_text())
    for variant in data["plugins"]["probe"].values():
        planted = dict(variant["tools"][0], name="planted_tool",
                       description="Planted. Runs anything.")
        variant["tools"].append(planted)
        if drop_schema:
            variant["tables"] = []
    return data


@pytest.mark.parametrize("how", ["world-writable", "group-writable", "foreign-owner",
                                 "unparsable"])
def test_a_planted_manifest_is_not_used(site: Path, tmp_path: Path, how: str) -> None:
    _tools(site, tmp_path)
    where = _manifest()
    where.write_text(json.dumps(_doctored()))
    if how == "world-writable":
        where.chmod(0o666)
    elif how == "group-writable":
        where.chmod(0o620)
    elif how == "foreign-owner":
        if os.geteuid() != 0:
            pytest.skip("changing a file's owner needs root")
        os.chown(where, 65534, 65534)
    else:
        where.write_text('{"format": 1, "plugins": ')
    listed = _tools(site, tmp_path)
    assert listed["plugin"] and "planted_tool" not in listed["out"]
    assert "probe_tool" in listed["out"]
    # rewritten by the boot that imported the plugins: this user's, and honest
    assert where.stat().st_uid == os.geteuid() and where.stat().st_mode & 0o077 == 0
    assert "planted_tool" not in where.read_text()


def test_the_manifest_a_user_keeps_is_what_lists(site: Path, tmp_path: Path) -> None:
    # the control of the test above: the same doctored manifest, owned by the user and
    # writable by no one else, is read (so the test above sees the trust check, not a miss)
    _tools(site, tmp_path)
    _manifest().write_text(json.dumps(_doctored()))
    _manifest().chmod(0o600)
    listed = _tools(site, tmp_path)
    assert not listed["plugin"] and "planted_tool" in listed["out"]


def test_declarations_without_the_plugins_schema_are_not_used(site: Path,
                                                              tmp_path: Path) -> None:
    # even in the user's own manifest: the key covers the tables a plugin claimed, so
    # declarations whose schema went missing (its config unchecked) answer nothing
    _tools(site, tmp_path)
    _manifest().write_text(json.dumps(_doctored(drop_schema=True)))
    _manifest().chmod(0o600)
    listed = _tools(site, tmp_path)
    assert listed["plugin"] and "planted_tool" not in listed["out"]


def test_a_manifest_in_the_workspace_is_never_read(site: Path, tmp_path: Path) -> None:
    _tools(site, tmp_path)
    planted = json.dumps(_doctored())
    _manifest().unlink()
    workspace = tmp_path / "ws"
    for folder in (workspace, workspace / ".callgate"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "plugin-manifest.json").write_text(planted)
    listed = _tools(site, workspace)
    assert listed["plugin"] and "planted_tool" not in listed["out"]


def test_a_listing_host_runs_nothing(site: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _tools(site, tmp_path)  # the manifest, recorded by the command line
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("CALLGATE_LOAD_PLUGINS", "probe")
    monkeypatch.setenv("CG_PROBE_DIR", str(site))
    host = Host.boot(None, listing=True)
    assert "cg_probe" not in sys.modules
    assert "probe_tool" in host.visible_names()
    with pytest.raises(BootError, match="booted to list tools"):
        host.open_session(tmp_path)


def test_no_variable_or_config_value_is_written_to_the_manifest(
        site: Path, tmp_path: Path, user_config: Path) -> None:
    """A declaration's key compares the ``CALLGATE_*`` variables and the plugin's config
    values, which may be tokens (docs/mcp.md's ``CALLGATE_TOKEN``): the manifest on disk
    holds their checksums, never the values, and still answers for the same inputs."""
    (user_config / "config.toml").write_text('[probe]\nlabel = "cfg-secret-4711"\n')
    first = _tools(site, tmp_path, CALLGATE_TOKEN="env-secret-0815")
    assert first["plugin"]
    text = _manifest().read_text()
    assert "cfg-secret-4711" not in text and "env-secret-0815" not in text
    again = _tools(site, tmp_path, CALLGATE_TOKEN="env-secret-0815")
    assert not again["plugin"] and again["out"] == first["out"]
    other = _tools(site, tmp_path, CALLGATE_TOKEN="env-secret-0816")  # another token
    assert other["plugin"]
