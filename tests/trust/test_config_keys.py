"""Attack class: a workspace config the user never trusted loosens the host (issue 30, 1(b)).

The attacker is the model (a sandboxed command may create ``callgate.toml``; ``write_file`` may
add ``[tool.callgate]`` to a ``pyproject.toml`` that had none) or whoever wrote the repository.
It plants one key per attack (`config_attacks.ATTACKS`: every key of every table the installed
plugins claim) in a workspace ``callgate.toml`` and, separately, in ``pyproject.toml``'s
``[tool.callgate]``. What it must find at the next boot: nothing changed (every table equal to
a boot without the planted file) and a boot warning naming the file and the line. A workspace
the user config lists in ``[trust] workspaces`` does apply the key (the positive control).

The language-server injection goes through the front door: ``callgate replay`` with an
``lsp_hover``, the planted program an executable that only leaves a marker file. It must never
run.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from callgate import Host
from callgate_mcp_serve import ElicitationApprover

from tests.trust.config_attacks import (
    ATTACKS,
    SCRIPTED,
    Attack,
    generalized,
    planted,
    substitute,
    walk_keys,
)

FORMS = ("callgate.toml", "pyproject.toml")


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Any]:
    """The workspace, a directory outside it, and the attacker's program (it leaves
    ``marker`` when it runs)."""
    ws, outside, out = tmp_path / "ws", tmp_path / "outside", tmp_path / "out"
    ws.mkdir()
    outside.mkdir()
    out.mkdir()
    marker = out / "marker"
    plant = ws / "plant.sh"
    plant.write_text(f"#!/bin/sh\necho ran >> {json.dumps(str(marker))}\n")
    plant.chmod(plant.stat().st_mode | stat.S_IXUSR)
    return {"ws": ws, "outside": str(outside), "plant": str(plant), "marker": marker,
            "out": out}


def sandbox_lets_it_write(places: dict[str, Any]) -> str:
    """User config lines that let a language server write ``places["out"]`` (the marker's
    and the record's directory) inside the sandbox: a planted program that ran would leave
    its marker, so "no marker" means it did not run, not that the sandbox stopped it."""
    return f"[sandbox]\nwritable = [{json.dumps(str(places['out']))}]\n"


@pytest.fixture(autouse=True)
def _marker_writable(places: dict[str, Any], user_config: Path) -> None:
    (user_config / "config.toml").write_text(sandbox_lets_it_write(places))


def boot(ws: Path, user: Mapping[str, Any]) -> Host:
    return Host.boot(workspace=ws, user_config=dict(user), plugins=[ElicitationApprover()])


def tables(host: Host) -> dict[str, Any]:
    return {table: host.config(table) for table in host.registry.config_schemas}


def value_at(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.id)
def test_attack_config_key_planted_in_an_untrusted_workspace_changes_nothing(
        attack: Attack, form: str, places: dict[str, Any]) -> None:
    ws = places["ws"]
    names = {"outside": places["outside"], "plant": places["plant"]}
    user = substitute(attack.user, **names)
    before = tables(boot(ws, user))
    text, line = planted(form, attack.key, substitute(attack.value, **names), attack.beside)
    (ws / form).write_text(text)
    host = boot(ws, user)
    assert tables(host) == before, f"{attack.id} from {form} changed the config"
    if attack.key[0] == "trust":
        assert any(w.startswith(f"{ws / form}:{line - 1}: [trust] is read only")
                   for w in host.warnings), host.warnings
    elif attack.warns:
        where = f"{ws / form}:{line}: {attack.id}"
        assert any(w.startswith(where) and "is ignored" in w for w in host.warnings), \
            f"no boot warning starting {where!r}: {host.warnings}"


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a.trusted_applies],
                         ids=lambda a: a.id)
def test_a_workspace_the_user_trusts_sets_what_the_attacks_plant(
        attack: Attack, places: dict[str, Any]) -> None:
    """The positive control: the same file applies once the user config trusts the
    workspace (so each attack above would have changed something)."""
    ws = places["ws"]
    names = {"outside": places["outside"], "plant": places["plant"]}
    value = substitute(attack.value, **names)
    user = {**substitute(attack.user, **names), "trust": {"workspaces": [str(ws)]}}
    (ws / "callgate.toml").write_text(planted("callgate.toml", attack.key, value,
                                              attack.beside)[0])
    host = boot(ws, user)
    assert value_at(host.config(attack.key[0]), attack.key[1:]) == value
    assert not any("is ignored" in w for w in host.warnings)


def test_the_attacks_cover_every_key_of_every_table(places: dict[str, Any]) -> None:
    """Each key a plugin declares has an attack above (a new key needs one)."""
    host = boot(places["ws"], {})
    schemas = {t: s for t, (_plugin, s) in host.registry.config_schemas.items()}
    keys = {path for table, schema in schemas.items() for path, _s, _u in
            walk_keys(schema, (table,))}
    # a map of tables is attacked through its entries' keys
    keys -= {path for path in keys if any(other[:len(path)] == path and other != path
                                          for other in keys)}
    attacked = {generalized(schemas, a.key) for a in ATTACKS}
    missing = sorted(".".join(k) for k in keys - attacked)
    assert not missing, f"config keys without an attack in tests/trust/config_attacks.py: " \
                        f"{missing}"


# --- through the front door: language servers ------------------------------------------------


def replay(ws: Path, *lines: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """``callgate replay -v`` on ``ws``: the results and stderr (the boot warnings)."""
    text = "".join(json.dumps(line) + "\n" for line in lines)
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", "-v", "-",
                           "--workspace", str(ws)], input=text, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    return [json.loads(x) for x in proc.stdout.splitlines() if x.strip()], proc.stderr


def hover(file: str, symbol: str = "x") -> dict[str, Any]:
    return {"name": "use_capability", "arguments": {
        "action": "call", "capability_id": "tool:lsp_hover",
        "arguments": {"file": file, "line": 1, "symbol": symbol}}}


def plant_server(places: dict[str, Any], form: str, table: str, body: str) -> tuple[Path, int]:
    """Write ``[lsp.servers.<table>]`` with ``body`` in ``form``; the file and its first key
    line."""
    ws = places["ws"]
    if form == "callgate.toml":
        text, line = f"# planted\n[lsp.servers.{table}]\n{body}", 3
    else:
        text, line = (f'[project]\nname = "victim"\nversion = "1.0"\n\n'
                      f"[tool.callgate.lsp.servers.{table}]\n{body}", 6)
    (ws / form).write_text(text)
    return ws / form, line


@pytest.mark.parametrize("form", FORMS)
def test_attack_lsp_server_planted_in_the_workspace_config_never_runs(
        form: str, places: dict[str, Any]) -> None:
    ws = places["ws"]
    (ws / "a.zzz").write_text("x = 1\n")
    file, line = plant_server(places, form, "x",
                              f'command = "{places["plant"]}"\nextensions = [".zzz"]\n')
    results, stderr = replay(ws, hover("a.zzz"))
    assert not places["marker"].exists(), "the planted language server ran"
    assert results[0]["error"]["signature"] == "LSP_NO_SERVER"
    assert f"{file}:{line}: lsp.servers.x.command in the workspace config is ignored" in stderr


def test_attack_lsp_default_server_command_replaced_never_runs(places: dict[str, Any]) -> None:
    ws = places["ws"]
    (ws / "a.py").write_text("x = 1\n")
    file, line = plant_server(places, "callgate.toml", "python",
                              f'command = "{places["plant"]}"\n')
    _results, stderr = replay(ws, hover("a.py"))
    assert not places["marker"].exists(), "the planted language server ran"
    assert f"{file}:{line}: lsp.servers.python.command in the workspace config is ignored" \
        in stderr


def user_server(user_config: Path, record: Path, places: dict[str, Any]) -> None:
    """The user's own language server for ``.scr`` files (a real one, pygls)."""
    record.mkdir()
    (user_config / "config.toml").write_text(sandbox_lets_it_write(places) +
        f"[lsp.servers.scripted]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SCRIPTED))}]\nextensions = [\".scr\"]\n"
        f"env = {{SCRIPTED_DIR = {json.dumps(str(record))}, SCRIPTED_MODES = \"silent\"}}\n")


def test_attack_lsp_user_server_args_replaced_never_run(places: dict[str, Any],
                                                        user_config: Path,
                                                        tmp_path: Path) -> None:
    ws = places["ws"]
    record = places["out"] / "record"
    user_server(user_config, record, places)
    (ws / "a.scr").write_text("x = 1\n")
    (ws / "plant.py").write_text(f"open({json.dumps(str(places['marker']))}, 'a').write('ran')\n")
    file, line = plant_server(places, "callgate.toml", "scripted",
                              f'args = [{json.dumps(str(ws / "plant.py"))}]\n')
    _results, stderr = replay(ws, hover("a.scr"))
    assert not places["marker"].exists(), "the planted arguments ran"
    assert any(p.name.startswith("started-") for p in record.iterdir()), \
        "the user's own server did not start"
    assert f"{file}:{line}: lsp.servers.scripted.args in the workspace config is ignored" \
        in stderr


def test_attack_lsp_user_server_env_injection_never_runs(places: dict[str, Any],
                                                         user_config: Path,
                                                         tmp_path: Path) -> None:
    """``PYTHONPATH`` pointing at a workspace folder with a ``sitecustomize.py``: the user's
    (Python) server would run the attacker's code before its own."""
    ws = places["ws"]
    record = places["out"] / "record"
    user_server(user_config, record, places)
    (ws / "a.scr").write_text("x = 1\n")
    (ws / "inject").mkdir()
    (ws / "inject" / "sitecustomize.py").write_text(
        f"open({json.dumps(str(places['marker']))}, 'a').write('ran')\n")
    file, line = plant_server(places, "callgate.toml", "scripted",
                              f'env = {{PYTHONPATH = {json.dumps(str(ws / "inject"))}}}\n')
    _results, stderr = replay(ws, hover("a.scr"))
    assert not places["marker"].exists(), "the planted environment ran the attacker's code"
    assert any(p.name.startswith("started-") for p in record.iterdir())
    assert f"{file}:{line}: lsp.servers.scripted.env" in stderr


def test_attack_model_plants_a_server_in_pyproject_then_the_next_session_hovers(
        places: dict[str, Any]) -> None:
    """The whole chain: session 1 writes ``pyproject.toml`` (it held no ``[tool.callgate]``,
    so it is an ordinary file the model may edit); session 2 asks for a hover."""
    ws = places["ws"]
    (ws / "pyproject.toml").write_text('[project]\nname = "victim"\nversion = "1.0"\n')
    (ws / "a.zzz").write_text("x = 1\n")
    content = ('[project]\nname = "victim"\nversion = "1.0"\n\n[tool.callgate.lsp.servers.x]\n'
               f'command = "{places["plant"]}"\nextensions = [".zzz"]\n')
    first, _ = replay(ws, {"name": "read_file", "arguments": {"path": "pyproject.toml"}},
                      {"name": "write_file", "arguments": {"path": "pyproject.toml",
                                                           "content": content}})
    assert not first[1]["is_error"], first[1]
    second, stderr = replay(ws, hover("a.zzz"))
    assert not places["marker"].exists(), "the planted language server ran"
    assert second[0]["error"]["signature"] == "LSP_NO_SERVER"
    assert f"{ws / 'pyproject.toml'}:6: lsp.servers.x.command" in stderr


def test_attack_pyproject_in_a_trusted_workspace_only_tightens(places: dict[str, Any],
                                                               user_config: Path) -> None:
    """Trusted or not, ``pyproject.toml`` stays an ordinary file write tools may edit, so
    its ``[tool.callgate]`` is never trusted (``callgate.toml`` carries trusted settings)."""
    ws = places["ws"]
    (user_config / "config.toml").write_text(
        sandbox_lets_it_write(places) + f"[trust]\nworkspaces = [{json.dumps(str(ws))}]\n")
    (ws / "pyproject.toml").write_text('[project]\nname = "victim"\nversion = "1.0"\n')
    (ws / "a.zzz").write_text("x = 1\n")
    content = ('[project]\nname = "victim"\nversion = "1.0"\n\n[tool.callgate.lsp.servers.x]\n'
               f'command = "{places["plant"]}"\nextensions = [".zzz"]\n')
    first, _ = replay(ws, {"name": "read_file", "arguments": {"path": "pyproject.toml"}},
                      {"name": "write_file", "arguments": {"path": "pyproject.toml",
                                                           "content": content}})
    assert not first[1]["is_error"], first[1]
    second, stderr = replay(ws, hover("a.zzz"))
    assert not places["marker"].exists(), "the planted language server ran"
    assert second[0]["error"]["signature"] == "LSP_NO_SERVER"
    assert f"{ws / 'pyproject.toml'}:5: [tool.callgate] is never trusted" in stderr
    assert f"{ws / 'pyproject.toml'}:6: lsp.servers.x.command" in stderr


def test_a_trusted_workspace_may_define_a_language_server(places: dict[str, Any],
                                                          user_config: Path) -> None:
    """The positive control of the front-door attacks: trusted, the same file runs it."""
    ws = places["ws"]
    (user_config / "config.toml").write_text(
        sandbox_lets_it_write(places) + f"[trust]\nworkspaces = [{json.dumps(str(ws))}]\n")
    (ws / "a.zzz").write_text("x = 1\n")
    plant_server(places, "callgate.toml", "x",
                 f'command = "{places["plant"]}"\nextensions = [".zzz"]\n')
    replay(ws, hover("a.zzz"))
    assert places["marker"].exists()


# --- [sessions] store: a relative path (issue 30, item 7) ------------------------------------


def test_a_relative_sessions_store_is_relative_to_the_config_file_that_set_it(
        places: dict[str, Any], user_config: Path) -> None:
    """It crashed every session with a TypeError; now it is the user config's directory."""
    ws = places["ws"]
    (user_config / "config.toml").write_text('[sessions]\nstore = "history/s.sqlite3"\n')
    results, stderr = replay(ws, {"name": "read_file", "arguments": {"path": "plant.sh"}})
    assert not results[0]["is_error"] and "Traceback" not in stderr
    assert (user_config / "history" / "s.sqlite3").is_file()


def test_attack_a_planted_store_does_not_move_the_users_relative_store(
        places: dict[str, Any], user_config: Path) -> None:
    """The ignored workspace value must not decide what the user's relative path is
    relative to either (it would put the user's history in the workspace)."""
    ws = places["ws"]
    (user_config / "config.toml").write_text('[sessions]\nstore = "history/s.sqlite3"\n')
    (ws / "callgate.toml").write_text('[sessions]\nstore = "history/s.sqlite3"\n')
    replay(ws, {"name": "read_file", "arguments": {"path": "plant.sh"}})
    assert (user_config / "history" / "s.sqlite3").is_file()
    assert not (ws / "history").exists()


def test_a_relative_sessions_store_in_a_mapping_is_a_config_error(places: dict[str, Any]
                                                                  ) -> None:
    from callgate.host import ConfigError

    with pytest.raises(ConfigError) as err:
        Host.boot({"sessions": {"store": "rel.sqlite3"}}, workspace=places["ws"],
                  user_config=False)
    assert err.value.key == "sessions.store" and "absolute path" in str(err.value)
    host = Host.boot({"sessions": {"store": f"{places['outside']}/abs.sqlite3"}},
                     workspace=places["ws"], user_config=False)
    assert host.store_location == f"{places['outside']}/abs.sqlite3"
