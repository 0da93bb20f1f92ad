"""code_index through the full pipeline (search.md §6, statements 24-29 and 38)."""

from __future__ import annotations

import socket

import pytest
from callgate import Host
from callgate_code import _languages

M_PY = "X = 1\n@dataclass\nclass Svc:\n    def run(self, n: int) -> str: ...\ndef main(): ...\n"


def test_python_outline(code):  # §6.24
    s = code({"m.py": M_PY})
    r = s.call("code_index", {"action": "outline", "path": "m.py"})
    assert not r.is_error
    assert r.text.split("\n") == [
        "m.py:1: var X — X = 1",
        "m.py:3: class Svc — class Svc",
        "m.py:4: method Svc.run — def run(self, n: int) -> str",
        "m.py:5: func main — def main()",
    ]


def test_go_method_and_struct(code):  # §6.25
    src = ("package s\n\ntype Server struct {\n\taddr string\n}\n\n"
           "func (s *Server) Start(ctx context.Context) error {\n\treturn nil\n}\n")
    s = code({"s.go": src})
    r = s.call("code_index", {"action": "outline", "path": "s.go"})
    assert r.text.split("\n") == [
        "s.go:3: struct Server — type Server struct",
        "s.go:7: method Server.Start — func (s *Server) Start(ctx context.Context) error",
    ]


FIXTURES = {
    "a.ts": ("export interface Shape { area(): number }\n"
             "type Id = string | number;\n"
             "enum Color { Red, Green }\n"
             "@Component()\nexport class Box extends Base implements Shape {\n"
             "  constructor(private x: number) { super(); }\n"
             "  area(): number { return 1; }\n}\n"
             "export const add = (a: number, b: number): number => a + b;\n"
             "function helper(): void {\n  class Hidden {}\n}\n"),
    "b.tsx": ("interface Props { name: string }\n"
              "export function Hello({ name }: Props) { return <b>{name}</b>; }\n"
              "export class View extends React.Component<Props> {\n"
              "  render() { return <div/>; }\n}\n"),
    "c.js": ("class Counter {\n  increment() { this.n++; }\n  static of() { return 1; }\n}\n"
             "function total(a, b) { return a + b; }\n"
             "const twice = function (x) { return 2 * x; };\n"
             "let a = 1, b = () => 2;\n"),
    "d.rs": ("pub struct Point { x: i32 }\n"
             "pub enum Shape { Dot }\n"
             "pub trait Area { fn area(&self) -> f64; }\n"
             "impl<T> Area for Point<T> {\n    fn area(&self) -> f64 { 0.0 }\n}\n"
             "pub const ORIGIN: i32 = 0;\n"
             "static COUNT: i32 = 1;\n"
             "type Pair = (i32, i32);\n"
             "mod geo {\n    pub fn dist() -> i32 { 1 }\n}\n"
             "fn main() {\n    fn inner() {}\n}\n"),
    "E.java": ("package p;\n"
               "/** Docs. */\n@Deprecated\npublic class E<T> extends B {\n"
               "  @Override\n  public void run() { new Runnable() { public void x() {} }; }\n"
               "  E() {}\n"
               "  interface Listener { void on(int e); }\n"
               "  enum Mode { ON; void flip() {} }\n"
               "  record Pair(int a, int b) {}\n}\n"),
}


def test_typescript_tsx_javascript_rust_and_java(code):  # §6.26
    s = code(FIXTURES)
    r = s.call("code_index", {"action": "outline"})
    assert not r.is_error
    assert r.text.split("\n") == [
        "E.java:4: class E — public class E<T> extends B",
        "E.java:6: method E.run — public void run()",
        "E.java:7: method E.E — E()",
        "E.java:8: interface E.Listener — interface Listener",
        "E.java:8: method Listener.on — void on(int e)",
        "E.java:9: enum E.Mode — enum Mode",
        "E.java:9: method Mode.flip — void flip()",
        "E.java:10: class E.Pair — record Pair(int a, int b)",
        "a.ts:1: interface Shape — interface Shape",
        "a.ts:2: type Id — type Id = string | number;",
        "a.ts:3: enum Color — enum Color",
        "a.ts:5: class Box — class Box extends Base implements Shape",
        "a.ts:6: method Box.constructor — constructor(private x: number)",
        "a.ts:7: method Box.area — area(): number",
        "a.ts:9: func add — const add = (a: number, b: number): number =>",
        "a.ts:10: func helper — function helper(): void",
        "b.tsx:1: interface Props — interface Props",
        "b.tsx:2: func Hello — function Hello({ name }: Props)",
        "b.tsx:3: class View — class View extends React.Component<Props>",
        "b.tsx:4: method View.render — render()",
        "c.js:1: class Counter — class Counter",
        "c.js:2: method Counter.increment — increment()",
        "c.js:3: method Counter.of — static of()",
        "c.js:5: func total — function total(a, b)",
        "c.js:6: func twice — const twice = function (x)",
        "d.rs:1: struct Point — pub struct Point",
        "d.rs:2: enum Shape — pub enum Shape",
        "d.rs:3: trait Area — pub trait Area",
        "d.rs:3: method Area.area — fn area(&self) -> f64",
        "d.rs:5: method Point.area — fn area(&self) -> f64",
        "d.rs:7: const ORIGIN — pub const ORIGIN: i32 = 0;",
        "d.rs:8: var COUNT — static COUNT: i32 = 1;",
        "d.rs:9: type Pair — type Pair = (i32, i32);",
        "d.rs:11: func geo.dist — pub fn dist() -> i32",
        "d.rs:13: func main — fn main()",
    ]


SEARCH_PY = ("def start(): ...\n"
             "class Server:\n    def Start(self): ...\n    def startAll(self): ...\n"
             "def restart(): ...\n")


def test_search_ranks_exact_then_prefix_then_rest(code):  # §6.27
    s = code({"a.py": SEARCH_PY, "b.py": "def startAll(): ...\n"})
    r = s.call("code_index", {"action": "search", "query": "start"})
    assert r.text.split("\n") == [
        "a.py:1: func start — def start()",
        "a.py:3: method Server.Start — def Start(self)",
        "a.py:4: method Server.startAll — def startAll(self)",
        "b.py:1: func startAll — def startAll()",
        "a.py:5: func restart — def restart()",
    ]
    r = s.call("code_index", {"action": "search", "query": "start", "kind": "method"})
    assert r.text.split("\n") == ["a.py:3: method Server.Start — def Start(self)",
                                  "a.py:4: method Server.startAll — def startAll(self)"]
    r = s.call("code_index", {"action": "search", "query": "server.st"})
    assert r.text.split("\n")[0] == "a.py:3: method Server.Start — def Start(self)"
    for bad in ({"action": "search"}, {"action": "outline", "limit": 201}):
        r = s.call("code_index", bad)
        assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False
    assert "query is required for action=search" in \
        s.call("code_index", {"action": "search"}).text


def test_limit_unsupported_files_and_empty_results(code):  # §6.28
    many = "".join(f"def f{i:03d}(): ...\n" for i in range(250))
    s = code({"many.py": many, "README.md": "# hi\n", "docs/a.md": "x\n", "docs/b.md": "y\n"})
    out = s.call("code_index", {"action": "outline", "path": "many.py"}).text.split("\n")
    assert len(out) == 101
    assert out[99] == "many.py:100: func f099 — def f099()"
    assert out[100] == ("... (truncated at 100 symbols; narrow path, query or kind, or raise "
                        "limit up to 200)")
    r = s.call("code_index", {"action": "outline", "path": "README.md"})
    assert r.is_error and r.text.startswith("code_index: unsupported file type .md; supported: ")
    assert ".go" in r.text and ".java" in r.text
    assert s.call("code_index", {"action": "outline", "path": "docs"}).text == "(no symbols)"
    r = s.call("code_index", {"action": "outline", "path": "nope"})
    assert r.error.kind == "not_found" and r.text == "code_index: path not found: nope"
    assert s.call("code_index", {"action": "outline", "path": "../"}).error.kind == \
        "outside_workspace"


def test_grammars_load_and_index_without_network(code, monkeypatch):  # §6.29
    files = dict(FIXTURES)
    files["m.py"] = M_PY
    files["s.go"] = "package s\n\nfunc Run() {}\n"
    s = code(files)

    def refuse(*args, **kwargs):
        raise OSError("network access attempted")

    for name in ("connect", "connect_ex", "sendto"):
        monkeypatch.setattr(socket.socket, name, refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    _languages.forget()
    r = s.call("code_index", {"action": "outline"})
    assert not r.is_error
    labels = {g.label for g in _languages.BY_EXTENSION.values()}
    assert labels == {"python", "go", "javascript", "typescript", "tsx", "rust", "java"}
    assert all(_languages.language(g) is not None for g in _languages.BY_EXTENSION.values())
    for path in ("E.java:", "a.ts:", "b.tsx:", "c.js:", "d.rs:", "m.py:", "s.go:"):
        assert any(line.startswith(path) for line in r.text.split("\n")), path


def test_walk_skips_what_grep_skips(code):  # §5 walk
    s = code({".gitignore": "gen/\n", "gen/g.py": "def g(): ...\n", ".h/h.py": "def h(): ...\n",
              "node_modules/n.js": "function n() {}\n", "ok.py": "def ok(): ...\n",
              "big.py": "x = 1\n" + "#" * (1 << 20) + "\n"})
    r = s.call("code_index", {"action": "outline"})
    assert r.text == "ok.py:1: func ok — def ok()"


def test_syntax_errors_are_skipped_and_named(code):  # §6.38
    s = code({"ok.py": "def ok(): ...\n", "bad.py": "def (\n"})
    r = s.call("code_index", {"action": "outline"})
    assert r.text.split("\n") == ["ok.py:1: func ok — def ok()",
                                  "... (not indexed, syntax errors: bad.py)"]
    r = s.call("code_index", {"action": "outline", "path": "bad.py"})
    assert r.is_error and r.text == "code_index: bad.py does not parse cleanly (first error at " \
        "line 1)"


def test_many_syntax_errors_are_summarised(code):  # §5 walk: at most five paths
    s = code({f"b{i}.py": "def (\n" for i in range(7)})
    r = s.call("code_index", {"action": "outline"})
    assert r.text.split("\n") == [
        "(no symbols)",
        "... (not indexed, syntax errors: b0.py, b1.py, b2.py, b3.py, b4.py and 2 more)"]


def test_missing_grammar_is_named(code, monkeypatch):  # §5 grammars
    go = _languages.BY_EXTENSION[".go"]
    monkeypatch.setitem(_languages._languages, go, None)
    s = code({"a.go": "package a\n", "b.py": "def b(): ...\n"})
    r = s.call("code_index", {"action": "outline", "path": "a.go"})
    assert r.text == "code_index: no grammar installed for .go (install tree-sitter-go)"
    assert s.call("code_index", {"action": "outline"}).text == "b.py:1: func b — def b()"


def test_tools_are_hidden_with_the_right_flags():  # integration notes
    import callgate_code
    import callgate_search

    host = Host.boot({}, plugins=[callgate_code, callgate_search], entrypoints=False)
    index, delete = host.registry.get("code_index"), host.registry.get("delete_symbol")
    assert index.visibility == delete.visibility == "hidden"
    assert index.contract_read_only and not delete.contract_read_only
    assert [r.argument for r in delete.mutates_paths] == ["path"]
    assert delete.groups == ("Edit",) and delete.preview is not None
    assert index.permission_subject.arguments == delete.permission_subject.arguments == ("path",)


@pytest.mark.parametrize("src,expected", [
    ("def f(\n    a,\n    b,\n) -> int:\n    return 1\n", "func f — def f( a, b, ) -> int"),
    ("class A(  # base\n    B):\n    pass\n", "class A — class A( B)"),
    ("if True:\n    def g(): ...\nelse:\n    def g(): return 1\n", "func g — def g()"),
    ("async def h(): ...\n", "func h — async def h()"),
])
def test_python_signatures(code, src, expected):  # §5 signatures
    s = code({"x.py": src})
    out = s.call("code_index", {"action": "outline", "path": "x.py"}).text.split("\n")
    assert out[0].split(": ", 1)[1] == expected
