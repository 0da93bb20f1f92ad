"""The generated contract document: host.md §1 and statement 12."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from callgate import Host, ToolSpec, hookimpl
from callgate.schema import canonical_bytes, fingerprint, short_fingerprint
from callgate_cli._contract import drift, generate

from .plugin_dist import callgate, make_plugin

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "depth": {"type":
          "integer", "minimum": 0}}, "required": ["path"], "additionalProperties": False}


class ContractTools:
    """Tools covering every kind of contract row."""

    def __init__(self, description: str = "Count the words of a file.",
                 schema: dict[str, Any] | None = None, first: bool = True) -> None:
        self.__name__ = "contracttools"
        self.description = description
        self.schema = schema or SCHEMA
        self.first = first

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        run = lambda ctx, args: "ok"  # noqa: E731
        specs = [
            ToolSpec(name="tally", description=self.description, schema=self.schema,
                     read_only=True, execute=run, visibility="surface"),
            ToolSpec(name="tally_old", description="", schema=self.schema, read_only=True,
                     visibility="alias", alias_of="tally", alias_args=lambda a: a),
            ToolSpec(name="sleep_until", description="Hidden compatibility alias for old "
                     "sessions. New calls use `tally(wait=true)`.", schema=SCHEMA,
                     read_only=True, visibility="alias", alias_of="tally", execute=run),
            ToolSpec(name="zap", description="Delete | destroy\n  things.", execute=run,
                     schema={"type": "object", "additionalProperties": False}),
            ToolSpec(name="proxyish", description="Judged by its target.", execute=run,
                     read_only=lambda a: True, schema={"type": "object"}),
            ToolSpec(name="sh_posix", description="The POSIX shell.", execute=run,
                     schema={"type": "object"}, platforms={"posix"}, visibility="surface"),
            ToolSpec(name="sh_windows", description="The Windows shell.", execute=run,
                     schema={"type": "object"}, platforms={"windows"}, visibility="surface"),
        ]
        for spec in specs if self.first else reversed(specs):
            registry.add(spec)


def _doc(**kwargs: Any) -> str:
    tools = ContractTools(**kwargs)
    hosts = [Host.boot({}, os=os_name, surface="lean", plugins=[tools], entrypoints=False)
             for os_name in ("posix", "windows")]
    return generate(*hosts)


def _table(doc: str) -> list[str]:
    """The contract table's rows (between its header and the next blank line)."""
    lines = doc.splitlines()
    start = lines.index("| Tool | Read-only | Description |") + 2
    return lines[start:lines.index("", start)]


def _row(doc: str, name: str) -> str:
    [row] = [line for line in _table(doc) if line.startswith(f"| `{name}` |")]
    return row


def test_table_has_the_seed_columns_and_a_row_per_tool() -> None:
    doc = _doc()
    assert "| Tool | Read-only | Description |\n| --- | --- | --- |" in doc
    assert _row(doc, "tally") == "| `tally` | true | Count the words of a file. |"
    assert _row(doc, "zap") == "| `zap` | false | Delete \\| destroy things. |"
    assert _row(doc, "proxyish").startswith("| `proxyish` | false |")  # callable flag
    table = [line.split("`")[1] for line in _table(doc)]
    assert table == sorted(table)
    assert set(table) == {"proxyish", "sh_posix", "sh_windows", "sleep_until", "tally",
                          "tally_old", "zap"}


def test_aliases_are_hidden_compatibility_rows() -> None:
    doc = _doc()
    assert _row(doc, "tally_old") == ("| `tally_old` | true | Hidden compatibility alias for "
                                      "old sessions. New calls use `tally`. |")
    assert _row(doc, "sleep_until") == ("| `sleep_until` | true | Hidden compatibility alias "
                                        "for old sessions. New calls use `tally(wait=true)`. |")
    assert "Hidden compatibility aliases (never in a provider schema): `sleep_until`, " \
           "`tally_old`." in doc


def test_per_os_note_and_surfaces() -> None:
    doc = _doc()
    assert "`sh_posix` (POSIX only), `sh_windows` (Windows only)" in doc
    assert "POSIX boot surface (full), in provider order: " in doc
    posix_line = next(line for line in doc.splitlines() if "POSIX boot surface" in line)
    windows_line = next(line for line in doc.splitlines() if "Windows boot surface" in line)
    assert "`sh_posix`" in posix_line and "`sh_windows`" not in posix_line
    assert "`sh_windows`" in windows_line and "`sh_posix`" not in windows_line


def test_schema_snapshot_records_canonical_schema_and_fingerprint() -> None:
    doc = _doc()
    assert f"| `tally` | `{fingerprint(SCHEMA)}` |" in doc
    assert (f"### `tally` ({short_fingerprint(SCHEMA)})\n\n```json\n"
            f"{canonical_bytes(SCHEMA).decode()}\n```") in doc
    changed = dict(SCHEMA, required=["depth", "path"])
    other = _doc(schema=changed)
    assert other != doc
    diff = drift_lines(doc, other)
    assert any(fingerprint(changed) in line for line in diff if line.startswith("+"))
    assert any('"required":["depth","path"]' in line for line in diff if line.startswith("+"))


def drift_lines(old: str, new: str) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm=""))


def test_generation_is_deterministic_and_independent_of_registration_order() -> None:
    assert _doc() == _doc() == _doc(first=False)


def test_drift_reports_a_unified_diff(tmp_path: Path) -> None:
    doc = _doc()
    target = tmp_path / "TOOL_CONTRACT.md"
    assert drift(target, doc)[0].startswith("---")  # a missing file drifts
    target.write_text(doc, encoding="utf-8")
    assert drift(target, doc) == []
    changed = _doc(description="Count the lines of a file.")
    diff = drift(target, changed)
    assert "-| `tally` | true | Count the words of a file. |" in diff
    assert "+| `tally` | true | Count the lines of a file. |" in diff


# --- statement 12, through the CLI --------------------------------------------------------

PLUGIN = '''
from callgate import ToolSpec, hookimpl

DESCRIPTION = {description!r}


class Plugin:
    @hookimpl
    def callgate_register_tools(self, registry):
        registry.add(ToolSpec(name="tally", description=DESCRIPTION, read_only=True,
                              visibility="surface", execute=lambda ctx, args: "ok",
                              schema={{"type": "object", "properties": {{}},
                                      "additionalProperties": False}}))


plugin = Plugin()
'''


def test_stmt12_contract_check_fails_after_a_description_change(tmp_path: Path) -> None:
    plugin_dir = tmp_path / "plugin"
    plugin_dir.mkdir()
    env = make_plugin(plugin_dir, "contracttest", PLUGIN.format(description="Count words."))
    doc = tmp_path / "docs" / "TOOL_CONTRACT.md"

    wrote = callgate("contract", "--write", "--path", str(doc), env=env, cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    assert "| `tally` | true | Count words. |" in doc.read_text()
    assert callgate("contract", "--check", "--path", str(doc), env=env).returncode == 0

    make_plugin(plugin_dir, "contracttest", PLUGIN.format(description="Count the words."))
    check = callgate("contract", "--check", "--path", str(doc), env=env)
    assert check.returncode == 1
    assert "differs from the registry" in check.stderr
    assert "+| `tally` | true | Count the words. |" in check.stderr

    assert callgate("contract", "--write", "--path", str(doc), env=env).returncode == 0
    assert callgate("contract", "--check", "--path", str(doc), env=env).returncode == 0


def test_contract_check_fails_on_a_missing_doc(tmp_path: Path) -> None:
    env = make_plugin(tmp_path, "contracttest", PLUGIN.format(description="Count words."))
    check = callgate("contract", "--check", "--path", str(tmp_path / "nope.md"), env=env)
    assert check.returncode == 1
