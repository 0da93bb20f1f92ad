"""Language servers (issue 21): warm ``lsp_definition``, cold first queries, edit diagnostics.

1. Warm ``lsp_definition`` through the whole pipeline (``await session.run``: validation,
   confinement, the read and digest of the file, the hop to the session's LSP loop, the
   render with source lines) against the same ``textDocument/definition`` sent by the bare
   pygls client of the same running server, timed on its own loop, in interleaved rounds.
   Target: ≤ 1.3×. The blocking facade (``callgate.sync``) is reported too.
2. The cold first query per server: a new session's first ``lsp_definition`` (spawn,
   ``initialize``, first sync and answer).
3. What ``[lsp] diagnostics_after_edit`` adds to an ``edit_file`` of a 1,000-line file with
   basedpyright: the same edits in a session with it off and one with it on (each edit adds
   a line with a new type error). Target: ≤ 1 s median.
4. Cross-file diagnostics (issue 35): an ``edit_file`` of a 1,000-line module that breaks the
   file importing it (it renames the imported function), then ``lsp_diagnostics`` of the
   importer until it reports the error; and the edit that mends it, until it is clean again.
   Timed from the edit's start to the answer that shows it. Target: ≤ 2 s median.

Ratios are between medians of the same run. Servers come from the dev group (and the npm
cache of the tests for TypeScript, when installed).

    uv run python benchmarks/lsp_tools.py [--calls 100] [--edits 15] [--starts 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import callgate_files
import callgate_lsp
from callgate import Host, ToolCall, sync
from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ratio, summary
from callgate_lsp import LSP

ROOT = Path(__file__).resolve().parents[1]
TS_SERVER = ROOT / ".cache" / "npm-lsp" / "node_modules" / ".bin" / "typescript-language-server"

LIB = "def make_circle(radius: float) -> float:\n    return 3.14159 * radius ** 2\n"
MAIN = "from lib import make_circle\n\nlabel = 'é😀'; area = make_circle(2.0)\n"
TS_LIB = "export function add(a: number, b: number): number {\n  return a + b;\n}\n"
TS_MAIN = "import { add } from './lib';\nconst s = 'é😀'; const n = add(1, 2);\n"


def servers() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    if shutil.which("jedi-language-server"):
        # jedi imports the compiled modules it finds, so it needs the sandbox (issue 30);
        # these sessions have none and the generated workspaces hold no such module
        found["jedi"] = {"python": {"command": shutil.which("jedi-language-server"),
                                    "sandbox": "if_available"}}
    if shutil.which("basedpyright-langserver"):
        found["basedpyright"] = {"python": {
            "command": shutil.which("basedpyright-langserver"), "args": ["--stdio"],
            "settings": {"basedpyright": {"analysis": {"typeCheckingMode": "standard"}}}}}
    if TS_SERVER.exists():
        found["typescript"] = {"typescript": {"command": str(TS_SERVER), "args": ["--stdio"]}}
    return found


def workspace(tmp: Path, name: str, typescript: bool) -> Path:
    ws = tmp / name
    ws.mkdir()
    if typescript:
        (ws / "lib.ts").write_text(TS_LIB, encoding="utf-8")
        (ws / "main.ts").write_text(TS_MAIN, encoding="utf-8")
    else:
        (ws / "lib.py").write_text(LIB, encoding="utf-8")
        (ws / "main.py").write_text(MAIN, encoding="utf-8")
    return ws


def query(typescript: bool) -> dict[str, Any]:
    if typescript:
        return {"file": "main.ts", "line": 2, "symbol": "add"}
    return {"file": "main.py", "line": 3, "symbol": "make_circle"}


def run(session: sync.Session, name: str, args: dict[str, Any]) -> Any:
    [result] = session.run_batch([ToolCall(f"b{time.perf_counter_ns()}", name, args)])
    assert not result.is_error, result.text
    return result


# --- 1. warm definition -------------------------------------------------------------------------


async def _bare(mgr: Any, spec: Any, args: dict[str, Any], line: str, calls: int
                ) -> list[float]:
    """The same definition request, sent by the server's pygls client on its own loop."""
    server, _ = await mgr.server(spec)
    uri = next(d.uri for d in server.documents.values() if d.path.endswith(args["file"]))
    column = line.index(args["symbol"])
    if server.encoding == "utf-8":
        column = len(line[:column].encode())
    elif server.encoding == "utf-16":
        column = len(line[:column].encode("utf-16-le")) // 2
    params = types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=args["line"] - 1, character=column))
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        answer = await server.client.text_document_definition_async(params)
        out.append(time.perf_counter() - started)
        assert answer
    return out


async def _warm_async(ws: Path, table: dict[str, Any], calls: int, typescript: bool
                      ) -> dict[str, Any]:
    host = Host.boot({"lsp": {"servers": table}}, plugins=[callgate_lsp], entrypoints=False,
                     surface="full")
    args = query(typescript)
    line = (TS_MAIN if typescript else MAIN).splitlines()[args["line"] - 1]

    async def one() -> Any:
        result = await session.run(ToolCall(f"a{time.perf_counter_ns()}", "lsp_definition",
                                            args))
        assert not result.is_error, result.text
        return result

    async with host.open_session(ws) as session:
        deadline = time.monotonic() + 120
        while not (await one()).text.startswith("1 definition(s):\nlib"):
            assert time.monotonic() < deadline, "the server never answered the definition"
            await asyncio.sleep(0.2)
        pipeline, bare = [], []
        mgr = session.extension(LSP)
        spec = mgr.table.for_path(str(ws / args["file"]))
        for _ in range(5):  # interleaved rounds, so drift hits both sides alike
            for _ in range(calls // 5):
                started = time.perf_counter()
                await one()
                pipeline.append(time.perf_counter() - started)
            bare += await mgr.call(_bare(mgr, spec, args, line, calls // 5))
        encoding = mgr.servers()[0]["encoding"]
    through, baseline = summary(pipeline), summary(bare)
    return {"pipeline": through, "bare_pygls": baseline, "ratio": ratio(through, baseline),
            "encoding": encoding}


def warm_definition(tmp: Path, label: str, table: dict[str, Any], calls: int) -> dict[str, Any]:
    """Through the async API (what an integrator's loop awaits), and through the blocking
    facade (`callgate.sync`, one more thread hop) for reference."""
    typescript = "typescript" in table
    ws = workspace(tmp, f"warm-{label}", typescript)
    out = asyncio.run(_warm_async(ws, table, calls, typescript))
    host = sync.Host.boot({"lsp": {"servers": table}}, plugins=[callgate_lsp],
                          entrypoints=False, surface="full")
    try:
        session = host.open_session(ws)
        args = query(typescript)
        deadline = time.monotonic() + 120
        while not run(session, "lsp_definition", args).text.startswith("1 definition(s):\nlib"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        facade = []
        for _ in range(calls):
            started = time.perf_counter()
            run(session, "lsp_definition", args)
            facade.append(time.perf_counter() - started)
        out["sync_facade"] = summary(facade)
        out["sync_facade_ratio"] = ratio(out["sync_facade"], out["bare_pygls"])
    finally:
        host.close()
    return out


# --- 2. cold first query ------------------------------------------------------------------------


def cold_first_query(tmp: Path, label: str, table: dict[str, Any], starts: int
                     ) -> dict[str, Any]:
    typescript = "typescript" in table
    ws = workspace(tmp, f"cold-{label}", typescript)
    host = sync.Host.boot({"lsp": {"servers": table}}, plugins=[callgate_lsp],
                          entrypoints=False, surface="full")
    seconds = []
    try:
        for _ in range(starts):
            session = host.open_session(ws)
            started = time.perf_counter()
            run(session, "lsp_definition", query(typescript))
            seconds.append(time.perf_counter() - started)
            session.close()
    finally:
        host.close()
    return summary(seconds, "s")


# --- 3. diagnostics after an edit -----------------------------------------------------------


def big_module(lines: int = 1000) -> str:
    out = []
    n = 0
    while len(out) < lines:
        out += [f"def f{n}(x: int) -> int:", f"    return x + {n}", ""]
        n += 1
    return "\n".join(out[:lines]) + "\n"


def after_edit(tmp: Path, table: dict[str, Any], edits: int) -> dict[str, Any]:
    samples: dict[str, list[float]] = {}
    shown: list[str] = []
    for mode in ("off", "on"):
        ws = tmp / f"edit-{mode}"
        ws.mkdir()
        (ws / "big.py").write_text(big_module(), encoding="utf-8")
        cfg = {"lsp": {"servers": table, "diagnostics_after_edit": mode == "on"}}
        host = sync.Host.boot(cfg, plugins=[callgate_lsp, callgate_files], entrypoints=False,
                              surface="full")
        try:
            session = host.open_session(ws)
            run(session, "read_file", {"path": "big.py", "limit": 10})
            deadline = time.monotonic() + 120
            while not run(session, "lsp_diagnostics", {"file": "big.py"}).meta["fresh"]:
                assert time.monotonic() < deadline
            times = []
            for k in range(edits + 1):
                anchor = f"def f{k}(x: int) -> int:"
                args = {"path": "big.py", "old_string": anchor,
                        "new_string": f'bad{k}: int = "{k}"\n{anchor}'}
                started = time.perf_counter()
                result = run(session, "edit_file", args)
                if k:  # the first edit warms the edit path itself
                    times.append(time.perf_counter() - started)
                if mode == "on" and "New diagnostics:" in result.text:
                    shown.append(result.text.split("New diagnostics:")[1].strip().split("\n")[0])
            samples[mode] = times
        finally:
            host.close()
    off, on = summary(samples["off"]), summary(samples["on"])
    added = round(on["median"] - off["median"], 2)
    return {"edit_off": off, "edit_on": on, "added_median_ms": added,
            "reported_new_error": sum("reportAssignmentType" in s for s in shown),
            "edits": edits}


# --- 4. diagnostics of an importer after an edit ------------------------------------------------


IMPORTER = "from big import f7\n\nvalue: int = f7(1)\n"


def importer_after_edit(tmp: Path, table: dict[str, Any], rounds: int) -> dict[str, Any]:
    ws = tmp / "importer"
    ws.mkdir()
    (ws / "big.py").write_text(big_module(), encoding="utf-8")
    (ws / "user.py").write_text(IMPORTER, encoding="utf-8")
    host = sync.Host.boot({"lsp": {"servers": table}}, plugins=[callgate_lsp, callgate_files],
                          entrypoints=False, surface="full")
    broke: list[float] = []
    mended: list[float] = []
    try:
        session = host.open_session(ws)
        deadline = time.monotonic() + 120
        while run(session, "lsp_diagnostics", {"file": "user.py"}).text != \
                "no diagnostics for user.py":
            assert time.monotonic() < deadline, "the importer never got clean"
        run(session, "read_file", {"path": "big.py", "limit": 10})
        for k in range(rounds * 2 + 1):
            breaking = k % 2 == 0
            old, new = ("def f7(", "def g7(") if breaking else ("def g7(", "def f7(")
            started = time.perf_counter()
            run(session, "edit_file", {"path": "big.py", "old_string": old, "new_string": new})
            while True:
                text = run(session, "lsp_diagnostics", {"file": "user.py"}).text
                if ('"f7" is unknown import symbol' in text) == breaking and \
                        (breaking or text == "no diagnostics for user.py"):
                    break
                assert time.perf_counter() - started < 60, text
            if k:  # the first round warms the path
                (broke if breaking else mended).append(time.perf_counter() - started)
    finally:
        host.close()
    both = broke + mended
    return {"broken_reported": summary(broke), "mended_reported": summary(mended),
            "all": summary(both), "rounds": rounds}


def main(calls: int = 100, edits: int = 15, starts: int = 3,
         only: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every server found (``only``: those of them named), each measured in turn."""
    found = {k: v for k, v in servers().items() if not only or k in only}
    out: dict[str, Any] = {"warm_definition": {}, "cold_first_query_s": {}}
    with tempfile.TemporaryDirectory(prefix="callgate-lsp-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for label, table in found.items():
            out["warm_definition"][label] = warm_definition(tmp, label, table, calls)
            out["cold_first_query_s"][label] = cold_first_query(tmp, label, table, starts)
        if "basedpyright" in found:
            out["diagnostics_after_edit_1000_lines"] = after_edit(
                tmp, found["basedpyright"], edits)
            out["importer_diagnostics_after_edit_1000_lines"] = importer_after_edit(
                tmp, found["basedpyright"], edits)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--edits", type=int, default=15)
    parser.add_argument("--starts", type=int, default=3)
    ns = parser.parse_args()
    print(json.dumps(main(ns.calls, ns.edits, ns.starts), indent=2))
