"""Model-facing descriptions promise only what this host has (issue 25 item 6).

Read with ``callgate tools --json`` in a subprocess: bash's ``description`` parameter
claims no audit log; bash names the file tools it can really reach (and, on the lean
surface, says they are reached through use_capability); bash and code_index point to
``lsp_*`` tools only when a plugin registers one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.plugin_dist import callgate, make_plugin

FAMILIES = "shell,code,files,search,capability"
LSP_STUB = '''
from callgate import ToolSpec, hookimpl


class _Lsp:
    @hookimpl
    def callgate_register_tools(self, registry):
        registry.add(ToolSpec(name="lsp_definition", description="Go to a definition.",
                              schema={"type": "object", "properties": {}},
                              execute=lambda ctx, args: "none", read_only=True))


plugin = _Lsp()
'''


def _descriptions(env: dict[str, str], *extra: str) -> dict[str, dict]:
    proc = callgate("tools", "--json", "--os", "posix", *extra, env=env)
    assert proc.returncode == 0, proc.stderr
    return {t["name"]: t for t in json.loads(proc.stdout)}


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = make_plugin(tmp_path_factory.mktemp("plain"), "lsp_stub", LSP_STUB)
    env["CALLGATE_LOAD_PLUGINS"] = FAMILIES
    return env


@pytest.fixture(scope="module")
def with_lsp(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = make_plugin(tmp_path_factory.mktemp("lsp"), "lsp_stub", LSP_STUB)
    env["CALLGATE_LOAD_PLUGINS"] = "lsp_stub," + FAMILIES
    return env


def test_the_description_parameter_claims_no_audit_log(plain) -> None:
    bash = _descriptions(plain)["bash"]
    text = bash["schema"]["properties"]["description"]["description"]
    assert "audit" not in text and "background job" in text


def test_lean_bash_says_the_hidden_file_tools_are_reached_through_use_capability(plain) -> None:
    text = _descriptions(plain)["bash"]["description"]
    assert ("use the dedicated tools (read_file and edit_file; grep, glob, ls and move_file "
            "are reached through use_capability, e.g. capability_id tool:grep)") in text
    full = _descriptions(plain, "--surface", "full")["bash"]["description"]
    assert "(grep, glob, ls, read_file, edit_file and move_file)" in full
    assert "use_capability" not in full


def test_lsp_pointers_only_when_an_lsp_tool_is_registered(plain, with_lsp) -> None:
    bare = _descriptions(plain, "--surface", "full")
    assert "lsp" not in bare["bash"]["description"].lower()
    assert "lsp" not in bare["code_index"]["description"].lower()
    assert "read_file or grep" in bare["code_index"]["description"]
    lsp = _descriptions(with_lsp, "--surface", "full")
    assert "lsp_definition" in lsp
    assert ("start with the lsp_* tools, read_file and a targeted grep"
            in lsp["bash"]["description"])
    assert "language-server tools (lsp_*)" in lsp["code_index"]["description"]


def test_without_the_search_plugin_bash_names_no_search_tool(tmp_path: Path) -> None:
    env = make_plugin(tmp_path, "lsp_stub", LSP_STUB)
    env["CALLGATE_LOAD_PLUGINS"] = "shell"
    text = _descriptions(env, "--surface", "full")["bash"]["description"]
    assert "dedicated tools" not in text and "grep" not in text and "read_file" not in text
