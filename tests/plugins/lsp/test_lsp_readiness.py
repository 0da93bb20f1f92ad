"""Complete first answers (issue 35, 2): a server's readiness model. A first
``lsp_references`` right after the server started listed the declaration only (basedpyright
had not enumerated the workspace yet; typescript-language-server answered from its
syntax-only server), with no note. Now it waits (``[lsp] references_wait_ms``) for the
server to load a small workspace, and an answer given before that says so."""

from __future__ import annotations

from pathlib import Path

import callgate_lsp._manager
from callgate_lsp import LSP

from .conftest import python_config

HELPER = "def helper(n: int) -> int:\n    return n * 2\n"
USERS = {f"user{i}.py": f"from helper import helper\n\nprint(helper({i}))\n" for i in range(4)}
FILES = {"helper.py": HELPER, **USERS}
EVERY = ["9 reference(s):", "helper.py:1  def helper(n: int) -> int:",
         *[line for i in range(4) for line in (f"user{i}.py:1  from helper import helper",
                                               f"user{i}.py:3  print(helper({i}))")]]
NOTE = ("(basedpyright-langserver (python) is still loading or indexing the project; this "
        "answer may be incomplete: retry shortly)")


def refs(s):
    return s.call("lsp_references", file="helper.py", line=1, symbol="helper")


def test_the_first_references_of_a_new_server_are_complete(lsp_session, no_leaks):
    s = lsp_session(python_config("basedpyright"), files=FILES)
    r = refs(s)  # the server starts with this query
    assert r.text.splitlines() == EVERY, r.text
    assert r.meta["loading"] is False


def test_without_the_wait_an_early_answer_says_it_may_be_incomplete(lsp_session, no_leaks):
    s = lsp_session(python_config("basedpyright", references_wait_ms=0), files=FILES)
    r = refs(s)
    assert r.text.endswith(NOTE), r.text
    assert r.meta["loading"] is True
    # once loaded, the same query is complete and says nothing more
    s.session.extension(LSP).run(_ready(s))
    assert refs(s).text.splitlines() == EVERY


def test_a_large_workspace_is_not_waited_for(lsp_session, no_leaks, monkeypatch):
    monkeypatch.setattr(callgate_lsp._manager, "SMALL_WORKSPACE_FILES", 3)  # 5 files: large
    s = lsp_session(python_config("basedpyright"), files=FILES)
    r = refs(s)
    assert r.text.endswith(NOTE), r.text


def test_typescript_first_references_are_complete(lsp_session, npm_servers: Path, no_leaks):
    files = {"src/util.ts": "export function add(a: number, b: number): number {\n"
                            "  return a + b;\n}\n",
             "src/main.ts": 'import { add } from "./util";\nconst n: number = add(1, 2);\n'
                            "console.log(n);\n",
             "tsconfig.json": '{"compilerOptions": {"strict": true}, "include": ["src"]}\n'}
    config = {"lsp": {"servers": {"typescript": {
        "command": str(npm_servers / "typescript-language-server"), "args": ["--stdio"]}}}}
    s = lsp_session(config, files=files)
    r = s.call("lsp_references", file="src/util.ts", line=1, symbol="add")
    assert r.text.splitlines() == [
        "3 reference(s):", 'src/main.ts:1  import { add } from "./util";',
        "src/main.ts:2  const n: number = add(1, 2);",
        "src/util.ts:1  export function add(a: number, b: number): number {"], r.text


def test_servers_lists_readiness(lsp_session, no_leaks):
    s = lsp_session(python_config("basedpyright"), files=FILES)
    refs(s)
    [listed] = s.session.extension(LSP).servers()
    assert listed["ready"] is True and listed["indexing"] is False


async def _ready(s) -> None:
    mgr = s.session.extension(LSP)
    [server] = mgr._servers.values()
    doc = next(iter(server.documents.values()))
    assert await server.until_ready(doc, 60)
