"""The tools on TypeScript, with typescript-language-server and typescript from npm (pinned in
``npm/package-lock.json``; skipped with the reason where npm is absent)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from callgate import sync
from callgate.testing import CallgateSession

from .conftest import PLUGINS, descendants, wait_gone

UTIL = """export interface Point {
  x: number;
  y: number;
}

/** Adds two numbers. */
export function add(a: number, b: number): number {
  return a + b;
}
"""

MAIN = """import { add, Point } from "./util";

const origin: Point = { x: 0, y: 0 };
const note = "ünïcødé 🚀"; const sum = add(origin.x, 2);
const label: string = add(1, 2);
"""

FILES = {"src/util.ts": UTIL, "src/main.ts": MAIN,
         "tsconfig.json": '{"compilerOptions": {"strict": true}, "include": ["src"]}\n'}


@pytest.fixture(scope="module")
def ts(npm_servers: Path, tmp_path_factory: pytest.TempPathFactory
       ) -> Iterator[CallgateSession]:
    ws = tmp_path_factory.mktemp("ts")
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    config = {"lsp": {"servers": {"typescript": {
        "command": str(npm_servers / "typescript-language-server"), "args": ["--stdio"]}}}}
    before = descendants()
    host = sync.Host.boot(config, plugins=list(PLUGINS), entrypoints=False, surface="full")
    session = CallgateSession(host, host.open_session(ws), ws)
    loaded(session)
    yield session
    host.close()
    assert not wait_gone(sorted(descendants() - before)), "tsserver processes left running"


def loaded(s: CallgateSession, timeout: float = 120.0) -> None:
    """Wait until tsserver has loaded the project: until then typescript-language-server
    answers from its syntax-only server (an import instead of the definition), which the
    tools mark as "still loading or indexing"."""
    deadline = time.monotonic() + timeout
    while True:
        r = s.call("lsp_diagnostics", file="src/main.ts")
        if "still loading" not in r.text and "diagnostic(s)" in r.text:
            return
        assert time.monotonic() < deadline, r.text
        time.sleep(0.2)


def test_definition_across_two_files_after_non_ascii(ts):
    r = ts.call("lsp_definition", file="src/main.ts", line=4, symbol="add")
    assert not r.is_error, r.text
    assert r.text == ("1 definition(s):\n"
                      "src/util.ts:7  export function add(a: number, b: number): number {")
    assert r.meta["encoding"] == "utf-16"


def test_references_include_the_declaration(ts):
    r = ts.call("lsp_references", file="src/util.ts", line=7, symbol="add")
    assert not r.is_error, r.text
    assert r.text.splitlines() == [
        "4 reference(s):",
        'src/main.ts:1  import { add, Point } from "./util";',
        'src/main.ts:4  const note = "ünïcødé 🚀"; const sum = add(origin.x, 2);',
        "src/main.ts:5  const label: string = add(1, 2);",
        "src/util.ts:7  export function add(a: number, b: number): number {",
    ]


def test_hover_shows_the_signature_and_the_doc(ts):
    r = ts.call("lsp_hover", file="src/util.ts", line=7, symbol="add")
    assert "function add(a: number, b: number): number" in r.text
    assert "Adds two numbers." in r.text
    r = ts.call("lsp_hover", file="src/main.ts", line=5, symbol="add")  # the imported name
    assert "add(a: number, b: number): number" in r.text


def test_diagnostics_of_a_type_error(ts):
    r = ts.call("lsp_diagnostics", file="src/main.ts")
    assert not r.is_error, r.text
    head, *rest = r.text.splitlines()
    assert head == "1 diagnostic(s) in src/main.ts:", r.text
    assert rest[0] == ("5:7 error [typescript] Type 'number' is not assignable to type "
                       "'string'. (2322)"), r.text
    # the unused names are hints: listed with severity="all" only (issue 35, 4)
    assert re.fullmatch(r'\(\d information and hint\(s\) not listed; severity="all" lists '
                        r'them\)', rest[1]), r.text
    assert " hint " not in r.text
    every = ts.call("lsp_diagnostics", file="src/main.ts", severity="all")
    head, *rest = every.text.splitlines()
    assert re.fullmatch(r"\d diagnostic\(s\) in src/main.ts:", head) and head != \
        "1 diagnostic(s) in src/main.ts:", every.text
    assert [x for x in rest if " hint " in x] and every.meta["hidden"] == 0, every.text
    only = ts.call("lsp_diagnostics", file="src/main.ts", severity="errors")
    assert only.text.splitlines()[:2] == r.text.splitlines()[:2], only.text
    assert only.meta["hidden"] == len(rest) - 1, only.text
