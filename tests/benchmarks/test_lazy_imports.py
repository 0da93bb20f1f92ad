"""Cold start stays lean (issue 11, the ``callgate tools`` <= 300 ms target).

Heavy libraries are imported where they are first used (a fetch, a probe, a
schema compiled, a result serialized), never while plugins register. These
tests keep an eager import from creeping back, and check that the shortcut
taken at boot (the fast subset check instead of jsonschema for config tables)
agrees with jsonschema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import jsonschema
import pytest
from callgate import Host, ToolSpec, hookimpl
from callgate._validation.fastcheck import compile_fast
from callgate.host import ConfigError, entry_points

#: What a cold `callgate tools` used to import at registration, ~250 ms in all.
HEAVY = ("jsonschema", "cattrs", "httpx", "bs4", "markdownify", "soupsieve", "PIL", "regex",
         "opentelemetry",
         "pathspec", "ctypes", "mcp", "numpy",
         # the command add-ons' packages (ui, serve) load with every `callgate` command
         "jinja2", "starlette", "uvicorn",
         # anyio's core (the worker thread's loop hand-off loads it at the first call)
         "anyio.from_thread",
         # the FTS5 indexes of docs and memory open their database on first use
         "sqlite3",
         # the spawn door imports asyncio for its asyncio start only
         "asyncio",
         # boot checks [sessions] store's form; the store's records load with the store
         "callgate._store.records", "callgate._store.recorder",
         # issue 38: the file tools are declared data; their code loads with the first call
         "callgate_files.tools.read_file", "callgate_files.tools.write_file",
         "callgate_files.tools.edit_file", "callgate_files.tools.delete_range",
         "callgate_files.tools.move_file", "callgate_files.tools.notebook_edit",
         "callgate_files.tools.apply_patch", "callgate_files.tools.insert_lines",
         "callgate_files._common")

PROBE = """
import contextlib, io, json, sys
import callgate_cli.cli
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = callgate_cli.cli.main(["tools"])
print(json.dumps({"code": code, "listed": out.getvalue().count("\\n"),
                  "loaded": sorted(m for m in %r if m in sys.modules)}))
"""


def _probe(tmp_path: Any, code: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_callgate_tools_imports_no_heavy_library(tmp_path: Any) -> None:
    found = _probe(tmp_path, PROBE % (HEAVY,))
    assert found["code"] == 0 and found["listed"] > 0
    assert found["loaded"] == []


def test_the_probe_sees_an_eager_import(tmp_path: Any) -> None:
    # the same probe, with one heavy import made at start: it must be reported
    found = _probe(tmp_path, "import regex\n" + PROBE % (HEAVY,))
    assert found["loaded"] == ["regex"]


#: Modules a cold ``callgate tools`` leaves in ``sys.modules`` beyond the interpreter's own
#: (``python -c pass``), every installed plugin loaded: 539 in this suite's environment
#: before issue 38's registration work (its private user config spares platformdirs), 370
#: after it, 366 after its third round, 360 once the core imports what it uses where it
#: uses it (branch cold2: the rule engine's difflib and urllib.parse, the config loader's
#: tomllib, the store's locations). A load-independent figure: a regression that imports
#: a tool's machinery, a library or the session layer while plugins register raises it.
#: This is a boot with no plugin manifest yet (the first after an install), which imports
#: every plugin; with the manifest warm, `WARM_MODULES_MAX` below.
COLD_MODULES_MAX = 360

COLD = """
import contextlib, io, sys
from callgate_cli.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["tools"])
print(code, *sorted(sys.modules))
"""


def _loaded(tmp_path: Any, code: str, home: Any = None) -> tuple[str, set[str]]:
    """What ``python -c CODE`` printed first, and the module names it printed after (with
    ``home`` as its ``CALLGATE_HOME``: where the plugin manifest is; else a fresh one)."""
    home = home if home is not None else tempfile.mkdtemp(dir=tmp_path)
    env = {**os.environ, "CALLGATE_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    first, *names = done.stdout.split()
    return first, set(names)


#: The same with the plugin manifest warm (issue 38, third round): ``callgate tools`` lists
#: what the plugins declared without importing one; what is left is the core, the command
#: line and the libraries they import (attrs, pluggy, json, logging, re): 183 at first (the
#: three libraries alone, ``import pluggy, attrs, jsonschema``: 157); 133 once the listing
#: path imports only what it uses (branch cold2): no argparse for a plain argv (nor gettext,
#: locale, shutil and its compressors), no tomllib without a config file, no difflib,
#: urllib.parse, hashlib or importlib.util before they are used, no store module without a
#: ``[sessions] store``, and none of the files layer's gate, scope, declared encodings,
#: protected paths or the fs layer (ToolContext names them in annotations only).
WARM_MODULES_MAX = 133

#: Modules a warm listing has no use for (branch cold2), each imported where it is used: by
#: the parser of an argv that is not plain, a config file read, a misspelled name, a URL
#: rule, a fingerprint, a deferred tool's lookup, a session's files, ``tools --json``, a
#: configured store, a type checker.
NOT_LISTED_WITH = ("argparse", "gettext", "shutil", "tomllib", "difflib", "urllib.parse",
                   "hashlib", "importlib.util", "callgate._files.gate", "callgate._files.scope",
                   "callgate._files.declared", "callgate._files.protected",
                   "callgate._fs.workspace", "callgate._fs.globs", "callgate._text.textio",
                   "callgate.schema", "callgate_cli._contract", "callgate._store.locations",
                   "callgate._permissions.boot")


def test_a_warm_manifest_imports_no_plugin_and_no_jsonschema(tmp_path: Any) -> None:
    home = tmp_path / "home"
    code, cold = _loaded(tmp_path, COLD, home)  # records the manifest
    code_again, warm = _loaded(tmp_path, COLD, home)
    assert code == code_again == "0"
    plugins = {ep.value.partition(":")[0].split(".")[0]
               for ep in entry_points(group="callgate")}
    assert {"callgate_files", "callgate_shell"} <= plugins and plugins <= cold
    imported = sorted(m for m in warm if m.split(".")[0] in plugins)
    assert imported == []
    assert not {m for m in warm if m.split(".")[0] == "jsonschema"}
    assert sorted(set(NOT_LISTED_WITH) & warm) == []
    _, interpreter = _loaded(tmp_path, "import sys; print('-', *sorted(sys.modules))")
    beyond = warm - interpreter
    assert len(beyond) <= WARM_MODULES_MAX, (len(beyond), sorted(beyond))


def test_a_cold_callgate_tools_imports_at_most_so_many_modules(tmp_path: Any) -> None:
    code, after = _loaded(tmp_path, COLD)
    _, interpreter = _loaded(tmp_path, "import sys; print('-', *sorted(sys.modules))")
    beyond = after - interpreter
    assert code == "0"
    assert {"callgate_files.plugin", "callgate_shell.plugin"} <= beyond  # the plugins loaded
    assert len(beyond) <= COLD_MODULES_MAX, (len(beyond), sorted(beyond))


def test_the_module_count_sees_an_eager_import(tmp_path: Any) -> None:
    # the session layer imported first (what registration must not do) is counted
    _, plain = _loaded(tmp_path, COLD)
    _, eager = _loaded(tmp_path, "import callgate.host\ncallgate.host.Session\n" + COLD)
    assert len(eager) > len(plain) + 10


#: A config table that is a map keyed by a name pattern (like [mcp_servers]).
NAMED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "propertyNames": {"pattern": "^[a-z][a-z0-9_]*$", "maxLength": 8},
    "additionalProperties": {
        "type": "object", "additionalProperties": False, "required": ["command"],
        "properties": {"command": {"type": "string", "minLength": 1},
                       "timeout_s": {"type": "number", "minimum": 1, "default": 30}},
    },
}


class Named:
    """A plugin claiming the ``[named]`` table."""

    __name__ = "named"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add_config("named", NAMED_SCHEMA)
        registry.add(ToolSpec(name="named_tool", description="A tool.", read_only=True,
                              schema={"type": "object"}, execute=lambda ctx, args: "ok"))


@pytest.mark.parametrize("table", [
    {}, {"a": {"command": "x"}}, {"a1_b": {"command": "x", "timeout_s": 2.5}},
    {"Bad": {"command": "x"}}, {"waytoolongname": {"command": "x"}}, {"a": {}},
    {"a": {"command": ""}}, {"a": {"command": "x", "timeout_s": 0}},
    {"a": {"command": "x", "extra": 1}}, {"a": {"command": "x", "timeout_s": True}},
])
def test_config_tables_judged_as_jsonschema_judges_them(table: dict[str, Any]) -> None:
    valid = jsonschema.Draft202012Validator(NAMED_SCHEMA).is_valid(table)
    fast = compile_fast(NAMED_SCHEMA)
    assert fast is not None
    if fast(table):
        assert valid  # the fast check never accepts what jsonschema refuses
    if valid:
        host = Host.boot({"named": table}, plugins=[Named()], entrypoints=False)
        expected = {k: {"timeout_s": 30, **v} for k, v in table.items()}
        assert host.config("named") == expected
    else:
        with pytest.raises(ConfigError) as err:
            Host.boot({"named": table}, plugins=[Named()], entrypoints=False)
        assert err.value.key is not None and err.value.key.startswith("named")
