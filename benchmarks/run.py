"""Run every callgate benchmark next to its peers in one go and write the results.

Each benchmark runs in a fresh child process (its own imports, memory and
threads), one after another; each one times callgate and its baseline in the
same run, interleaved, so the ratios hold on a busy machine even when the
absolute times drift. Writes ``results.json`` (everything measured, plus the
machine, its load and the tool versions), ``results.md`` (the table: figure,
baseline, ratio, target, met) and PNG plots under ``plots/`` (matplotlib, from
the ``bench`` dependency group). Every benchmark module of this directory is listed
in `BENCHMARKS` (``tests/benchmarks`` checks it). Runs are hermetic: ``_hermetic`` gives
this process and its children a private, empty ``$CALLGATE_HOME`` and user config
directory, so a run neither records into the user's store nor reads the user's config.

    uv run --group bench python benchmarks/run.py              # the full suite
    uv run --group bench python benchmarks/run.py --only grep_tree,cold_start
    uv run python benchmarks/run.py --smoke --no-plots --out /tmp/b  # tiny inputs

The full run generates a 1 GiB file and 50 MiB files in a temporary directory
(deleted afterwards; ``--tmp DIR`` to choose where), writes 500 MB through a
background job, greps the interpreter's standard library, and installs
openhands-aci once into ``benchmarks/.venv-peers`` (see ``_peers.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib
import importlib.metadata as metadata
import importlib.util
import inspect
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

Result = dict[str, Any]


# --- the benchmarks and how each is driven --------------------------------------------


def _module(name: str) -> Any:
    return importlib.import_module(name)


def _pipeline_overhead(smoke: bool, tmp: str | None) -> Result:
    return asyncio.run(_module("pipeline_overhead").measure(64 if smoke else 3000))


def _mcp_overhead(smoke: bool, tmp: str | None) -> Result:
    return _module("mcp_overhead").run(calls=40 if smoke else 3000)


def _batch_io(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("batch_io").run(batch=2, repeat=1, delay_ms=10, sweep=False)
    return _module("batch_io").run(batch=8, repeat=7, delay_ms=100, sweep=True)


def _read_file(smoke: bool, tmp: str | None) -> Result:
    argv = (["--size-mb", "1", "--line", "2000", "--repeat", "1"] if smoke
            else ["--size-mb", "1024", "--line", "5000000", "--repeat", "5"])
    return _module("read_file").main(argv + (["--dir", tmp] if tmp else []))


def _edit_sizes(smoke: bool, tmp: str | None) -> Result:
    edit_sizes = _module("edit_sizes")
    if smoke:  # the peer worker runs under this interpreter: it reports openhands-aci absent
        return edit_sizes.run("1K,64K", scale=0.05, peers=True, install_peers=False,
                              directory=tmp, peer_python=sys.executable)
    return edit_sizes.run(directory=tmp)


def _edit_file(smoke: bool, tmp: str | None) -> Result:
    argv = ["--size-mb", "1", "--repeat", "1"] if smoke else ["--size-mb", "50", "--repeat", "5"]
    return _module("edit_file").main(argv + (["--dir", tmp] if tmp else []))


def _grep_tree(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("grep_tree").run(repeat=1, smoke_files=60)
    return _module("grep_tree").run(repeat=5)


def _grep_engines(smoke: bool, tmp: str | None) -> Result:
    grep = _module("grep")
    if smoke:
        with tempfile.TemporaryDirectory(dir=tmp) as tree:
            _module("grep_tree").make_tree(tree, 30)
            return grep.run(tree, [grep.PATTERNS[1]], 1)
    return grep.run(_stdlib(), list(grep.PATTERNS), 5)


def _stdlib() -> str:
    import sysconfig

    return sysconfig.get_paths()["stdlib"]


def _sandbox_overhead(smoke: bool, tmp: str | None) -> Result:
    try:
        return _module("sandbox_overhead").measure(3 if smoke else 200)
    except SystemExit as exc:  # it exits when bubblewrap cannot run here
        return {"skipped": str(exc)}


def _hook_overhead(smoke: bool, tmp: str | None) -> Result:
    return asyncio.run(_module("hook_overhead").measure(5 if smoke else 200))


def _memory_docs(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("memory_docs").run(facts=200, repeat=1)
    return _module("memory_docs").run(facts=10_000, repeat=7)


def _sessions(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("sessions").run(calls=2000, repeat=1, record_calls=500,
                                       resume_calls=1000, size_calls=500)
    return _module("sessions").run(calls=100_000, repeat=7)


def _ui(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("ui").run(calls=300, repeat=3)
    return _module("ui").run(calls=10_000, repeat=15)


def _reference(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("reference").run(size_mb=2, line=2000, repeat=1, naive_repeat=1,
                                        directory=tmp, smoke_files=30)
    return _module("reference").run(directory=tmp)


def _cold_start(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("cold_start").run(repeat=1, importtime_runs=1, warmup=False)
    return _module("cold_start").run(repeat=10, importtime_runs=3)


def _job_output(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("job_output").measure(2_000_000, 1)
    return _module("job_output").measure(500_000_000, 3)


def _mcp_call(smoke: bool, tmp: str | None) -> Result:
    mcp_call = _module("mcp_call")
    if smoke:  # three server kinds x two clients take ~7 s: check the entry point only
        params = list(inspect.signature(mcp_call.main).parameters)
        assert params[:2] == ["calls", "starts"], params
        return {"skipped": "smoke: signature checked only (it spawns six MCP servers)"}
    return asyncio.run(mcp_call.main(300, 3))


def _http_sessions(smoke: bool, tmp: str | None) -> Result:
    sizes = "3x5" if smoke else "200x50,50x50,10x50"
    return _module("http_sessions").main(["--sizes", sizes])


def _http_memory(smoke: bool, tmp: str | None) -> Result:
    return _module("http_memory").main(["--calls", "60" if smoke else "10000",
                                        "--every", "20" if smoke else "1000"])


def _subagents(smoke: bool, tmp: str | None) -> Result:
    return _module("subagents").run(rounds=20 if smoke else 300)
def _serve_stdio(smoke: bool, tmp: str | None) -> Result:
    return asyncio.run(_module("serve_stdio").main(50 if smoke else 600))


def _fleet(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("fleet").run(tasks=4, delay_ms=20, repeat=1)
    return _module("fleet").run(tasks=16, delay_ms=200, repeat=7)


def _skills_discovery(smoke: bool, tmp: str | None) -> Result:
    if smoke:
        return _module("skills_discovery").run(skills=40, repeat=1)
    return _module("skills_discovery").run(skills=1000, repeat=15)


def _lsp_tools(smoke: bool, tmp: str | None) -> Result:
    lsp_tools = _module("lsp_tools")
    if not lsp_tools.servers():
        return {"skipped": "no language server installed (jedi-language-server, basedpyright)"}
    if smoke:  # one server, a few queries: the whole path, not the figures
        return lsp_tools.main(calls=5, edits=1, starts=1, only=("jedi",))
    return lsp_tools.main(calls=100, edits=15, starts=3)


def _permission_rules(smoke: bool, tmp: str | None) -> Result:
    # smoke: this tree against itself (the harness, not the figures)
    return _module("permission_rules").run(calls=300 if smoke else 4000,
                                           baseline_ref="HEAD" if smoke else BASELINE_REF)


def _confinement_cost(smoke: bool, tmp: str | None) -> Result:
    confinement_cost = _module("confinement_cost")
    with tempfile.TemporaryDirectory(prefix="callgate-bench-baseline-", dir=tmp) as tree:
        if smoke:  # this tree against itself: the harness, not the figures
            return confinement_cost.run(ROOT, "1K", rounds=1, calls=2)
        _git_tree(BASELINE_REF, Path(tree), "core", "plugins/files")
        return confinement_cost.run(Path(tree), "1K,1M", rounds=15, calls=20)


#: the git ref the benchmarks that compare two trees of callgate measure against
BASELINE_REF = os.environ.get("CALLGATE_BENCH_BASELINE", "main")


def _script(name: str, *args: str) -> Result:
    """A benchmark module that prints its JSON report, run as its own process."""
    done = subprocess.run([sys.executable, str(HERE / f"{name}.py"), *args],
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        return {"skipped": f"failed: {done.stderr.strip()[-300:]}"}
    return json.loads(done.stdout)


def _apply_patch(smoke: bool, tmp: str | None) -> Result:
    return _module("apply_patch").main(["--repeat", "1" if smoke else "9", "--sizes-kib",
                                        "64" if smoke else "1024,20480",
                                        *(["--dir", tmp] if tmp else [])])


def _executor(smoke: bool, tmp: str | None) -> Result:
    return _script("executor", "--calls", "20" if smoke else "300", "--sessions",
                   "3" if smoke else "50", *(["--dir", tmp] if tmp else []))


def _executor_unit(smoke: bool, tmp: str | None) -> Result:
    return _script("executor_unit", "--files", "20" if smoke else "200", "--repeat",
                   "2" if smoke else "20", "--trips", "100" if smoke else "2000")


def _git_tree(ref: str, into: Path, *paths: str) -> None:
    """``paths`` of ``ref`` as files under ``into`` (``git archive``: no worktree to clean)."""
    data = subprocess.run(["git", "archive", ref, *paths], cwd=ROOT, check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")


@dataclass
class Bench:
    """One benchmark: how to run it and who owns the module it drives."""

    name: str
    title: str
    owner: str
    run: Callable[[bool, str | None], Result]
    needs: tuple[str, ...] = field(default_factory=tuple)


BENCHMARKS = [
    Bench("apply_patch", "apply_patch on Codex's scenarios, and its speed vs edit_file",
          "files (issue 32)", _apply_patch),
    Bench("executor", "remote (a worker over stdio) vs local per-call overhead; sessions "
          "with a worker each", "executor (issue 37)", _executor),
    Bench("executor_unit", "file-system and process operations per call vs one stdio round "
          "trip (the unit of remoting)", "executor (issue 37)", _executor_unit),
    Bench("mcp_overhead", "Per-call pipeline overhead vs the MCP SDK", "core (issue 17)",
          _mcp_overhead, ("mcp",)),
    Bench("pipeline_overhead", "Per-call pipeline overhead, batches of 1 and 64",
          "core (issue 2)", _pipeline_overhead),
    Bench("fleet", "16-task read-only fleet of scripted children vs one by one",
          "tasks (issue 22)", _fleet),
    Bench("batch_io", "8 I/O-bound read-only calls: one batch vs one by one",
          "benchmarks (issue 11)", _batch_io, ("mcp",)),
    Bench("read_file", "read_file window deep in a 1 GiB file vs tail | head",
          "files (issue 3)", _read_file),
    Bench("edit_sizes", "edit_file, 1 KiB ... 50 MiB, vs plain Python and openhands-aci",
          "benchmarks (issue 11)", _edit_sizes),
    Bench("edit_file", "edit_file on 50 MiB vs plain Python (files' own benchmark)",
          "files (issue 3)", _edit_file),
    Bench("grep_tree", "grep over the stdlib tree vs rg and GNU grep", "benchmarks (issue 11)",
          _grep_tree),
    Bench("grep", "grep tool vs rg with the engine's own flags, and the Python engine",
          "search (issue 6)", _grep_engines),
    Bench("cold_start", "Cold `callgate tools` vs `python -c pass`", "benchmarks (issue 11)",
          _cold_start),
    Bench("job_output", "Background job writing 500 MB: memory and throughput",
          "shell (issue 4)", _job_output),
    Bench("mcp_call", "MCP over stdio through use_capability vs the bare SDK client",
          "capability (issue 7)", _mcp_call, ("mcp",)),
    Bench("sandbox_overhead", "`bash true` with and without the bubblewrap sandbox",
          "sandbox (issue 13)", _sandbox_overhead, ("callgate_sandbox",)),
    Bench("hook_overhead", "A no-op Claude Code command hook per call vs no hook",
          "hooks (issue 33)", _hook_overhead, ("callgate_hooks",)),
    Bench("memory_docs", "memory search over 10,000 facts and docs search, vs grep -ri",
          "memory, docs (issue 19)", _memory_docs),
    Bench("sessions", "the session store: recording overhead, history search over 100,000 "
          "calls, resume of 10,000, size", "sessions (issue 18)", _sessions),
    Bench("http_sessions", "serve --http: concurrent MCP sessions x read_file vs the SDK's "
          "own streamable-HTTP server", "mcp-serve (issue 23)", _http_sessions, ("mcp",)),
    Bench("http_memory", "serve --http: RSS over 10,000 read_file calls in one session vs the "
          "SDK's own streamable-HTTP server", "mcp-serve (issue 34)", _http_memory, ("mcp",)),
    Bench("ui", "callgate ui: a 10,000-call session's page, and the live-update delay",
          "contrib/ui (issue 24)", _ui),
    Bench("subagents", "a subagent's child session: open + close, sharing the MCP connection",
          "tasks (issue 22)", _subagents, ("mcp",)),
    Bench("serve_stdio", "serve over stdio: tools/call read_file vs the bare SDK stdio server",
          "mcp-serve (issue 23)", _serve_stdio, ("mcp",)),
    Bench("skills_discovery", "skill and slash-command discovery over 1,000 skill folders vs "
          "a plain directory walk", "skills (issue 20)", _skills_discovery),
    Bench("lsp_tools", "language servers: warm lsp_definition vs the bare pygls client, cold "
          "first query, diagnostics after an edit", "lsp (issue 21)", _lsp_tools, ("pygls",)),
    Bench("permission_rules", "the permission step for a compound shell command against 8 "
          "rules vs a baseline ref's engine", "core (issue 16)", _permission_rules),
    Bench("confinement_cost", "race-free confinement: read_file and edit_file vs a baseline "
          "ref's tree", "core, files (issue 16)", _confinement_cost),
    Bench("reference", "Issue 11's reference figures not re-measured above (no callgate)",
          "benchmarks (issue 11)", _reference),
]
BY_NAME = {b.name: b for b in BENCHMARKS}


# --- rows of the table ------------------------------------------------------------------


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "us":
        return f"{value:.1f} µs"
    if unit == "s":
        return f"{value:.2f} s"
    if value >= 100:
        return f"{value:.0f} {unit}"
    return f"{value:.2f} {unit}" if value < 10 else f"{value:.1f} {unit}"


def _timing(t: dict[str, Any] | None) -> str:
    if not t:
        return "—"
    return f"{_fmt(t['median'], t['unit'])} (p95 {_fmt(t['p95'], t['unit'])})"


def _row(bench: str, what: str, callgate: str, baseline: str, ratio: Any, target: str,
         met: bool | None, note: str = "") -> dict[str, Any]:
    if not target and met is None and not note.startswith(("skipped", "failed", "result not")):
        target = "report"  # a figure no issue set a target for: every row says which it is
    return {"benchmark": bench, "what": what, "callgate": callgate, "baseline": baseline,
            "ratio": ratio, "target": target, "met": met, "note": note}


def rows_for(name: str, r: Result) -> list[dict[str, Any]]:
    """The table rows one benchmark's result gives (targets from issue 11)."""
    if "skipped" in r:
        return [_row(name, BY_NAME[name].title, "—", "—", None, "", None,
                     f"skipped: {r['skipped']}")]
    return ROWS[name](r)


def _rows_apply_patch(r: Result) -> list[dict[str, Any]]:
    sc = r["scenarios"]
    rows = [_row("apply_patch", f"{sc['scenarios']} Codex scenarios: correct / refused loudly "
                 "/ silently wrong", f"{sc['correct']} / {sc['refused_loudly']} / "
                 f"{sc['silently_wrong']}", "Codex's expectations", None,
                 "0 silently wrong (issue 32)", sc["silently_wrong"] == 0)]
    for speed in r.get("speed", []):
        rows.append(_row("apply_patch", f"one-line change, {speed['file_kib']} KiB file",
                         f"{speed['apply_patch_ms']} ms", f"edit_file {speed['edit_file_ms']} ms",
                         speed["apply_patch_vs_edit_file"], "", None))
    return rows


def _rows_executor(r: Result) -> list[dict[str, Any]]:
    rows = []
    for tool, t in r["per_call"].items():
        over = t["overhead_ms"]
        rows.append(_row("executor", f"{tool}: remote minus local, median", f"+{over} ms",
                         "local", None, "≤ +1 ms over stdio (issue 37)", over <= 1.0))
    c = r["concurrent"]
    rows.append(_row("executor", f"{c['sessions']} sessions, a worker each, {c['calls']} calls",
                     f"{c['errors']} errors in {c['seconds']} s", "", None,
                     "0 errors (issue 37)", c["errors"] == 0))
    return rows


def _rows_executor_unit(r: Result) -> list[dict[str, Any]]:
    rtt = r["round_trip"]
    return [_row("executor_unit", f"{tool}: operations per call", str(c["per_call"]),
                 f"one round trip {rtt.get('200B_us')} µs", None, "", None)
            for tool, c in r["primitives"].items()]


def _rows_mcp_overhead(r: Result) -> list[dict[str, Any]]:
    """Issue 17's targets: overhead ≤ 15 µs (async) and ≤ 40 µs (plain, non-blocking),
    ≥ 1.5× faster than ``MCPServer.call_tool`` on both; the thread-hop path is reported."""
    out = []
    for kind in ("async", "async_inline", "sync", "sync_thread"):
        base = "async" if kind.startswith("async") else "sync"
        ours, direct = r[f"callgate_{kind}"], r[f"direct_{base}"]
        overhead = r[f"overhead_{kind}_us"]
        label = {"async": "async tool (cancel guard)",
                 "async_inline": "async tool (non-blocking: no guard)",
                 "sync": "plain tool (non-blocking: inline)",
                 "sync_thread": "plain tool (worker thread)"}[kind]
        limit = {"async": 15, "sync": 40}.get(kind)
        out.append(_row("mcp_overhead", f"pipeline overhead per trivial call, {label}",
                        _timing(ours), f"direct call {_timing(direct)}",
                        f"+{overhead:.1f} µs", f"≤ {limit} µs overhead" if limit else "report",
                        overhead <= limit if limit else None))
        sdk = r[f"mcp_call_tool_{base}"]
        speedup = r[f"mcp_call_tool_vs_callgate_{kind}"]
        # issues 17 and 38: 1.5x the SDK's speed, 2x for a tool declared non-blocking
        want = {"async": 1.5, "async_inline": 2.0, "sync": 1.5}.get(kind)
        out.append(_row("mcp_overhead", f"same call vs MCP SDK `MCPServer.call_tool`, {label}",
                        _timing(ours), f"MCPServer.call_tool {_timing(sdk)}",
                        f"SDK/callgate {speedup:.2f}×", f"≥ {want}× faster" if want else "report",
                        speedup >= want if want else None))
        client = r[f"mcp_client_{base}"]
        out.append(_row("mcp_overhead", f"same call vs in-process `mcp.Client`, {label}",
                        _timing(ours), f"mcp.Client {_timing(client)}",
                        f"SDK/callgate {r[f'mcp_client_vs_callgate_{kind}']:.2f}×", "report",
                        None))
    return out


def _rows_pipeline_overhead(r: Result) -> list[dict[str, Any]]:
    out = []
    for tool, row in r.items():
        out.append(_row("pipeline_overhead", f"{tool}: batch of 64, per call",
                        f"{row['batch_of_64_per_call_median_us']:.1f} µs (p95 "
                        f"{row['batch_of_64_per_call_p95_us']:.1f} µs)",
                        f"batch of 1: {row['batch_of_1_median_us']:.1f} µs", "", "", None))
    return out


def _rows_batch_io(r: Result) -> list[dict[str, Any]]:
    out = []
    for key, label in (("web_fetch", "web_fetch of a slow loopback URL"),
                       ("mcp_slow", "MCP `slow` tool via use_capability")):
        row = r.get(key)
        if not row:
            continue
        if "skipped" in row:
            out.append(_row("batch_io", label, "—", "—", None, "≤ 1.5× one call", None,
                            row["skipped"]))
            continue
        n = r["batch"]
        out.append(_row("batch_io", f"{n}× {label} (~{r['delay_ms']} ms each) in one batch",
                        _timing(row["batch"]), f"one call {_timing(row['one_call'])}; "
                        f"{n} one by one {_timing(row['one_by_one'])}",
                        f"{row['batch_vs_one_call']:.2f}× one call",
                        "≤ 1.5× one call", row["batch_vs_one_call"] <= 1.5))
    return out


def _rows_fleet(r: Result) -> list[dict[str, Any]]:
    n = r["tasks"]
    return [_row("fleet", f"fleet of {n} read-only children (slowest sleeps "
                 f"{r['slowest_child_delay_ms']:.0f} ms)", _timing(r["fleet"]),
                 f"slowest child alone {_timing(r['slowest_child'])}; {n} one by one "
                 f"{_timing(r['one_by_one'])}", f"{r['fleet_vs_slowest_child']:.2f}× slowest",
                 "≤ 1.5× the slowest child", r["met"])]


def _rows_read_file(r: Result) -> list[dict[str, Any]]:
    where = f"line {r['line']:,} of a {r['file_mb']} MiB file, {r['limit']} lines"
    return [
        _row("read_file", f"first read_file window at {where}", _fmt(r["first_read_ms"], "ms"),
             f"`tail -n +K | head` {_fmt(r['tail_ms'], 'ms')}", f"{r['first_read_vs_tail']}×",
             "≤ 1.5× tail", r["first_read_vs_tail"] <= 1.5, "medians only (module's output)"),
        _row("read_file", "later windows of the same file", _fmt(r["later_window_ms"], "ms"),
             "", "", "≤ 5 ms", r["later_window_ms"] <= 5, "medians only (module's output)"),
    ]


def _rows_edit_sizes(r: Result) -> list[dict[str, Any]]:
    out = []
    peer = r["openhands_aci"]
    for row in r["rows"]:
        plain = row["plain"]
        out.append(_row("edit_sizes", f"edit_file, one unique replacement, {row['label']}",
                        _timing(row["callgate"]), f"plain read+replace+atomic write "
                        f"{_timing(plain)}", f"{row['edit_vs_plain']:.2f}×",
                        "≤ 1.2× plain (issue 38)", row["edit_vs_plain"] <= 1.2,
                        f"plain + dir fsync {_timing(row['plain_dirsync'])}"))
        if "openhands" in row:
            faster = row["edit_vs_openhands"] < 1
            out.append(_row("edit_sizes", f"edit_file vs openhands-aci str_replace, "
                            f"{row['label']}", _timing(row["callgate"]),
                            f"openhands-aci {_timing(row['openhands'])}",
                            f"{row['edit_vs_openhands']:.2f}×", "faster (< 1×)", faster))
        elif "openhands_refused" in row:
            said = str(row["openhands_refused"])
            said = said[said.find("File is too large"):] if "File is too large" in said \
                else said[:160]
            out.append(_row("edit_sizes", f"edit_file vs openhands-aci str_replace, "
                            f"{row['label']}", _timing(row["callgate"]),
                            "openhands-aci refuses", "—", "faster (< 1×)", True,
                            f"capability difference, openhands-aci says: {said}"))
        elif not peer["available"]:
            out.append(_row("edit_sizes", f"edit_file vs openhands-aci, {row['label']}",
                            _timing(row["callgate"]), "—", None, "faster (< 1×)", None,
                            f"skipped: {peer['reason'][:160]}"))
    return out


def _rows_edit_file(r: Result) -> list[dict[str, Any]]:
    return [_row("edit_file", f"edit_file on {r['file_mb']} MiB (files' generator)",
                 _fmt(r["edit_file_ms"], "ms"), f"plain {_fmt(r['plain_ms'], 'ms')}",
                 f"{r['edit_vs_plain']}×", "≤ 1.5× plain", r["edit_vs_plain"] <= 1.5,
                 "medians only (module's output)")]


def _rows_grep_tree(r: Result) -> list[dict[str, Any]]:
    where = f"{r['files']:,} files, {r['mb']} MB, {r['matches'].get('callgate')} matches"
    tree = r.get("tree_label", "the tree")
    out = [_row("grep_tree", f"grep `{r['pattern']}` over {tree} ({where})",
                _timing(r["callgate"]), f"`rg -n` {_timing(r['rg'])}",
                f"{r['callgate_vs_rg']:.2f}×", "≤ 1.1× rg (issue 38)", r["callgate_vs_rg"] <= 1.1,
                f"engine {r['engine']}")]
    out.append(_row("grep_tree", "same, vs rg doing the same work (same skips, parallel)",
                    _timing(r["callgate"]), f"`rg -n -g …` "
                    f"{_timing(r['rg_parallel_same_work'])}",
                    f"{r['callgate_vs_rg_parallel_same_work']:.2f}×", "", None,
                    f"in path order (`rg -n --sort path -g …`) {_timing(r['rg_same_work'])}, "
                    f"{r['callgate_vs_rg_same_work']:.2f}×"))
    if "gnu_grep" in r:
        out.append(_row("grep_tree", "same, vs GNU grep", _timing(r["callgate"]),
                        f"`grep -rnE` {_timing(r['gnu_grep'])}",
                        f"{r['callgate_vs_gnu_grep']:.2f}×", "", None))
    return out


def _rows_grep(r: Result) -> list[dict[str, Any]]:
    out = []
    for row in r["rows"]:
        m = row["median_ms"]
        n = row["matches"].get("tool")
        out.append(_row("grep", f"grep `{row['pattern']}` ({n} matches), tool vs rg run with "
                        "the engine's flags", _fmt(m["tool"], "ms"), f"rg {_fmt(m['rg'], 'ms')}",
                        f"{row['tool_over_rg']}×", "", None,
                        f"Python engine {_fmt(m['python'], 'ms')} "
                        f"({row['python_over_rg']}× rg); medians only"))
    return out


def _rows_sandbox(r: Result) -> list[dict[str, Any]]:
    out = []
    for key, label in (("pipeline", "`bash` tool running `true`"),
                       ("process", "bare `bash -c true` process")):
        row = r[key]
        out.append(_row("sandbox_overhead", f"{label}, sandboxed (bwrap)",
                        f"{_fmt(row['sandboxed_median_ms'], 'ms')} (p95 "
                        f"{_fmt(row['sandboxed_p95_ms'], 'ms')})",
                        f"unconfined {_fmt(row['unconfined_median_ms'], 'ms')} (p95 "
                        f"{_fmt(row['unconfined_p95_ms'], 'ms')})", f"{row['ratio']}×", "", None,
                        f"+{row['overhead_median_ms']} ms"))
    return out


def _rows_sessions(r: Result) -> list[dict[str, Any]]:
    rec, hist, res, size = r["recording"], r["history"], r["resume"], r["size"]
    return [
        _row("sessions", "a trivial call with [sessions] record = \"all\"",
             _timing(rec["record_all"]), f"record = \"off\" {_timing(rec['record_off'])}",
             f"{rec['ratio']:.2f}× (+{rec['overhead_us']:.1f} µs)",
             f"≤ +{rec['target_us']:.0f} µs", rec["overhead_us"] <= rec["target_us"]),
        _row("sessions", f"history search over {r['search_calls']:,} recorded calls, "
             "default kinds", _timing(hist["search"]),
             f"LIKE scan {_timing(hist['like_scan'])}", f"{hist['ratio']:.3f}×",
             f"≤ {hist['target_ms']:.0f} ms", hist["search"]["median"] <= hist["target_ms"],
             f"with tool_output {_timing(hist['search_with_outputs'])}; the history tool "
             f"{_timing(r['history_tool'])}"),
        _row("sessions", f"resume of a session with {res['calls']:,} calls and "
             f"{res['observed_files']} observed files", _timing(res["resume"]),
             f"a new session {_timing(res['new_session'])}", f"{res['ratio']:.2f}×",
             f"≤ {res['target_ms']:.0f} ms", res["resume"]["median"] <= res["target_ms"]),
        _row("sessions", "store size per 1,000 typical calls", f"{size['per_1000_calls_mb']} MB",
             f"recorded text {size['recorded_text_per_1000_calls_mb']} MB", "", "report", None,
             f"of which search index {size['search_index_per_1000_calls_mb']} MB"),
    ]


def _rows_ui(r: Result) -> list[dict[str, Any]]:
    page, live = r["page"], r["live"]
    return [
        _row("ui", f"session page of {r['calls']:,} calls (latest 200 entries, "
             f"{page['page_bytes'] // 1024} KiB), whole body", _timing(page["full"]),
             f"static file of that size {_timing(page['static_full'])}",
             f"{page['ratio_static']:.1f}×", f"≤ {page['target_ms']:.0f} ms",
             page["full"]["median"] <= page["target_ms"],
             f"first byte {_timing(page['ttfb'])}; the store's entries() "
             f"{_timing(page['entries'])}; first page {_timing(page['first_full'])}; "
             f"sessions list {_timing(page['list_full'])}"),
        _row("ui", "live update: a finished call to the open page's event stream",
             _timing(live["to_page"]), f"the store's commit {_timing(live['to_store'])}",
             f"{live['ratio']:.1f}×", f"≤ {live['target_ms']:.0f} ms",
             live["to_page"]["median"] <= live["target_ms"]
             and (not live.get("to_dom") or live["to_dom"]["median"] <= live["target_ms"]),
             f"drawn in headless Chromium {_timing(live.get('to_dom'))}"),
    ]


def _rows_subagents(r: Result) -> list[dict[str, Any]]:
    return [_row("subagents", "child session open + close (strict read-only profile, the "
                 "parent's MCP server shared)", _timing(r["child"]),
                 f"a plain session {_timing(r['plain_session'])}", f"{r['ratio']:.3f}×",
                 f"≤ {r['target_ms']:.0f} ms", r["met"],
                 f"shares the MCP connection: {r['shares_mcp_connection']}")]


def _rows_hook_overhead(r: Result) -> list[dict[str, Any]]:
    floor = r["spawn_floor"]
    note = (f"overhead {r['overhead_per_hook_ms']:.2f} ms per call, "
            f"{r['overhead_vs_spawn_floor']}× a bare `bash -c true` start")
    return [
        _row("hook_overhead", "no-op PreToolUse command hook, per call",
             f"{r['noop_pre_tool_use_hook']['median_ms']:.2f} ms (p95 "
             f"{r['noop_pre_tool_use_hook']['p95_ms']:.2f} ms)",
             f"no hook {r['no_hook']['median_ms']:.3f} ms; spawn floor "
             f"{floor['median_ms']:.2f} ms", None, "", None, note),
        _row("hook_overhead", "no-op PreToolUse and PostToolUse hooks, per call",
             f"{r['noop_pre_and_post_hooks']['median_ms']:.2f} ms (p95 "
             f"{r['noop_pre_and_post_hooks']['p95_ms']:.2f} ms)",
             f"no hook {r['no_hook']['median_ms']:.3f} ms", None, "", None),
    ]


def _rows_memory_docs(r: Result) -> list[dict[str, Any]]:
    target = r["target_ms"]
    memory, grep = r["memory_median_ms"], r["memory_grep_median_ms"]
    docs, docs_grep = r["docs_median_ms"], r["docs_grep_median_ms"]
    scan = _fmt(r["memory_scan_median_ms"], "ms")
    return [
        _row("memory_docs", f"memory search over {r['facts']:,} facts, median of "
             f"{len(r['memory'])} queries, index kept", _fmt(memory, "ms"),
             f"grep -ri {_fmt(grep, 'ms')}", f"{memory / grep:.2f}×", f"≤ {target:.0f} ms",
             memory <= target, f"stat scan instead of inotify {scan}; first search of a "
             f"fresh process {_fmt(r['cold_first_search_ms'], 'ms')}"),
        _row("memory_docs", "memory search right after a hand edit of one fact",
             _fmt(r["memory_edited_median_ms"], "ms"), f"grep -ri {_fmt(grep, 'ms')}",
             f"{r['memory_edited_median_ms'] / grep:.2f}×", f"≤ {target:.0f} ms",
             r["memory_edited_median_ms"] <= target),
        _row("memory_docs", f"docs search over callgate's docs ({r['docs_files']} files), "
             f"median of {len(r['docs'])} queries", _fmt(docs, "ms"),
             f"grep -ri {_fmt(docs_grep, 'ms')}", f"{docs / docs_grep:.2f}×",
             f"≤ {target:.0f} ms", docs <= target),
    ]


def _rows_reference(r: Result) -> list[dict[str, Any]]:
    ref = r["issue_reference"]
    where = f"100 lines at line {r['line']:,} of a {r['file_mb']} MiB file"
    out = []
    for key, label, ref_key in (("tail_head", "`tail -n +K | head`", "tail_head_ms"),
                                ("sed", "`sed -n 'K,K+99p;K+99q'`", "sed_ms"),
                                ("python_islice", "Python `islice` over byte lines",
                                 "python_islice_ms")):
        out.append(_row("reference", f"{label}, {where}", "—", _timing(r[key]), "", "", None,
                        f"issue's figure {ref[ref_key]} ms"))
    out.append(_row("reference", f"naive `os.walk` + `re` over {r['tree']} "
                    f"({r['naive_walk_re_matches']} matches)", "—", _timing(r["naive_walk_re"]),
                    "", "", None, f"issue's figure {ref['naive_walk_re_s']} s"))
    out.append(_row("reference", "`Draft202012Validator.validate`, 3-property object", "—",
                    _timing(r["jsonschema_validate"]), "", "", None,
                    f"issue's figure {ref['jsonschema_validate_us']} µs"))
    return out


def _rows_cold_start(r: Result) -> list[dict[str, Any]]:
    t = r["callgate_tools"]
    return [_row("cold_start", f"cold `callgate tools` ({r['tools_listed']} tools listed)",
                 _timing(t), f"`python -c pass` {_timing(r['python_pass'])}; core deps "
                 f"import {_timing(r['python_core_deps'])}",
                 f"+{r['callgate_tools_minus_python_ms']:.0f} ms",
                 "≤ 200 ms", t["median"] <= 200, "breakdown below"),
            _row("cold_start", "same, vs importing the registry's libraries (issue 38)",
                 _timing(t), f"`import pluggy, attrs, jsonschema` "
                 f"{_timing(r['python_issue38_deps'])}", f"{r['callgate_tools_vs_issue38_deps']}×",
                 "≤ 1.2×", r["callgate_tools_vs_issue38_deps"] <= 1.2),
            _row("cold_start", "modules a cold `callgate tools` imports (beyond the "
                 "interpreter's own; load-independent)", str(r["modules_imported"]), "", "",
                 "≤ 150 modules", r["modules_imported"] <= 150)]


def _rows_job_output(r: Result) -> list[dict[str, Any]]:
    mb = r["bytes"] / 1e6
    return [
        _row("job_output", f"background job writing {mb:.0f} MB: host peak RSS growth",
             f"{r['peak_rss_growth_mib']:.1f} MiB", "", "", "≤ 64 MiB",
             r["peak_rss_growth_mib"] <= 64),
        _row("job_output", "its throughput vs `yes | head -c N > file`",
             f"{r['job_mb_per_s']} MB/s", f"{r['direct_mb_per_s']} MB/s",
             f"{r['throughput_vs_direct']:.2f}×", "≥ 0.5×", r["throughput_vs_direct"] >= 0.5,
             f"best-of {r.get('best_of_vs_direct', '—')}×; medians of {r['repeat']}"),
        _row("job_output", "its throughput vs `yes | head -c N | cat > file`",
             f"{r['job_mb_per_s']} MB/s", f"{r['cat_mb_per_s']} MB/s",
             f"{r['throughput_vs_cat']:.2f}×", "≥ 0.5×", r["throughput_vs_cat"] >= 0.5,
             f"best-of {r.get('best_of_vs_cat', '—')}×"),
    ]


def _rows_serve_stdio(r: Result) -> list[dict[str, Any]]:
    return [_row("serve_stdio", f"`callgate serve` stdio tools/call read_file ({r['calls']} calls)",
                 f"{_fmt(r['callgate_median_ms'], 'ms')} (p95 {_fmt(r['callgate_p95_ms'], 'ms')})",
                 f"bare SDK stdio server {_fmt(r['bare_sdk_median_ms'], 'ms')} (p95 "
                 f"{_fmt(r['bare_sdk_p95_ms'], 'ms')})", f"{r['ratio']}×", "≤ 1.1× (issue 38)",
                 r["ratio"] <= 1.1,
                 f"+{r['overhead_median_ms']} ms per call")]


def _rows_mcp_call(r: Result) -> list[dict[str, Any]]:
    c = r["call_ms"]
    out = [_row("mcp_call", f"MCP tools/call over stdio via use_capability ({c['calls']} calls)",
                f"{_fmt(c['callgate_median'], 'ms')} (p95 {_fmt(c['callgate_p95'], 'ms')})",
                f"ClientSession.call_tool {_fmt(c['bare_sdk_median'], 'ms')} (p95 "
                f"{_fmt(c['bare_sdk_p95'], 'ms')})", f"{c['ratio']}×", "≤ 1.2× (issue 38)",
                c["ratio"] <= 1.2,
                f"+{c['overhead_median']} ms per call")]
    for server, row in r["cold_start_ms"].items():
        out.append(_row("mcp_call", f"MCP cold start `{server}` (spawn, initialize, list)",
                        _fmt(row["callgate_median"], "ms"),
                        f"bare SDK {_fmt(row['bare_sdk_median'], 'ms')}",
                        f"{row['callgate_median'] / row['bare_sdk_median']:.2f}×", "", None))
    return out


def _rows_http_sessions(r: Result) -> list[dict[str, Any]]:
    """Issue 23's targets: 0 errors, p99 ≤ 50 ms, ≤ 2 MiB of server RSS per idle session."""
    out = []
    for row in r["sizes"]:
        c, b, size = row["callgate"], row["sdk"], f"{row['sessions']}x{row['calls']}"
        out.append(_row("http_sessions", f"{size}: throughput",
                        f"{c['throughput_calls_s']} calls/s", f"{b['throughput_calls_s']} calls/s",
                        f"{row['ratios']['throughput']}×", "≥ 1.0× the SDK (issue 38)",
                        row["ratios"]["throughput"] >= 1.0))
        out.append(_row("http_sessions", f"{size}: p50 latency", f"{c['p50_ms']} ms",
                        f"{b['p50_ms']} ms", f"{row['ratios']['p50']}×",
                        "≤ 1.0× the SDK (issue 38)", row["ratios"]["p50"] <= 1.0))
        out.append(_row("http_sessions", f"{size}: p50 / p99 latency",
                        f"{c['p50_ms']} / {c['p99_ms']} ms", f"{b['p50_ms']} / {b['p99_ms']} ms",
                        row["ratios"]["p99"], "p99 ≤ 50 ms, 0 errors",
                        c["p99_ms"] <= 50 and c["errors"] == 0, f"errors {c['errors']}"))
        out.append(_row("http_sessions", f"{size}: RSS per idle session",
                        f"{c['rss_per_idle_session_mib']} MiB",
                        f"{b['rss_per_idle_session_mib']} MiB",
                        row["ratios"]["rss_per_idle_session"], "≤ 2 MiB",
                        c["rss_per_idle_session_mib"] <= 2.0))
    return out


def _rows_skills_discovery(r: Result) -> list[dict[str, Any]]:
    m, target = r["median_ms"], r["target_warm_ms"]
    return [
        _row("skills_discovery", f"warm discovery of {r['found']:,} skills (inotify feed)",
             _fmt(m["warm"], "ms"), f"`os.walk` of the skills root {_fmt(m['walk'], 'ms')}",
             f"{r['ratios']['warm_vs_walk']}×", f"≤ {target:.0f} ms", r["warm_met"],
             f"scandir + stat {_fmt(m['scandir'], 'ms')}; medians only"),
        _row("skills_discovery", "same, stat-signed (no inotify: what non-Linux hosts get)",
             _fmt(m["warm_stat"], "ms"), f"scandir + stat {_fmt(m['scandir'], 'ms')}",
             f"{r['ratios']['warm_stat_vs_scandir']}×", f"≤ {target:.0f} ms",
             r["warm_stat_met"]),
        _row("skills_discovery", "cold discovery (every SKILL.md read and parsed)",
             _fmt(m["cold"], "ms"), f"`os.walk` {_fmt(m['walk'], 'ms')}",
             f"{r['ratios']['cold_vs_walk']}×", "", None,
             f"after one edit {_fmt(m['edited'], 'ms')}; slash_command list "
             f"{_fmt(m['slash_list'], 'ms')}"),
    ]


def _rows_lsp_tools(r: Result) -> list[dict[str, Any]]:
    out = []
    for server, row in r["warm_definition"].items():
        out.append(_row("lsp_tools", f"warm lsp_definition through the pipeline, {server}",
                        _timing(row["pipeline"]), f"bare pygls client {_timing(row['bare_pygls'])}",
                        f"{row['ratio']}×", "≤ 1.3×", row["ratio"] <= 1.3,
                        f"blocking facade {_timing(row.get('sync_facade'))}"))
    for server, t in r["cold_first_query_s"].items():
        out.append(_row("lsp_tools", f"cold first lsp_definition of a new session, {server}",
                        _timing(t), "", "", "report", None))
    edit = r.get("diagnostics_after_edit_1000_lines")
    if edit:
        out.append(_row("lsp_tools", "edit_file of a 1,000-line file with diagnostics_after_edit "
                        "(basedpyright)", _timing(edit["edit_on"]),
                        f"off {_timing(edit['edit_off'])}",
                        f"+{edit['added_median_ms']} ms", "≤ 1 s added",
                        edit["added_median_ms"] <= 1000,
                        f"new error reported in {edit['reported_new_error']} of {edit['edits']}"))
    return out


def _rows_permission_rules(r: Result) -> list[dict[str, Any]]:
    out = []
    for case in ("repeated", "distinct", "distinct, quoted"):
        row = r[case]
        out.append(_row("permission_rules", f"permission step, {case} command lines, "
                        f"{r['rules']} rules", _timing(row["new"]),
                        f"`{r['baseline_ref']}`'s engine {_timing(row['baseline'])}",
                        f"{row['ratio']}×", "report (vs the baseline ref)", None))
    return out


def _rows_confinement_cost(r: Result) -> list[dict[str, Any]]:
    out = []
    for row in r["rows"]:
        wall, cpu = row["wall"], row["cpu"]
        out.append(_row("confinement_cost", f"{row['cell']} through the pipeline, this tree",
                        _timing(wall["candidate"]), f"baseline tree {_timing(wall['baseline'])}",
                        f"{wall['ratio']}×", f"≤ {r['target_max_ratio']}× the baseline",
                        wall["ratio"] <= r["target_max_ratio"],
                        f"CPU time {cpu['ratio']}×; fastest calls {wall['min_ratio']}×"))
    return out


def _rows_http_memory(r: Result) -> list[dict[str, Any]]:
    """Issue 34: the server's memory plateaus over a long session, as the SDK's does."""
    c, b = r["callgate"], r["sdk"]
    return [
        _row("http_memory", f"RSS growth over {c['calls']:,} calls (second half)",
             f"{c['growth_mib']} MiB ({c['growth_second_half_mib']} MiB)",
             f"{b['growth_mib']} MiB ({b['growth_second_half_mib']} MiB)", None,
             "plateaus", None),
        _row("http_memory", f"RSS after {c['calls']:,} calls",
             f"{c['rss_after_mib']} MiB", f"{b['rss_after_mib']} MiB",
             r["ratios"]["rss_after"], "≤ 1.1× the SDK's (issue 38's)", None),
    ]


ROWS: dict[str, Callable[[Result], list[dict[str, Any]]]] = {
    "apply_patch": _rows_apply_patch, "executor": _rows_executor,
    "executor_unit": _rows_executor_unit,
    "mcp_overhead": _rows_mcp_overhead, "pipeline_overhead": _rows_pipeline_overhead,
    "batch_io": _rows_batch_io, "fleet": _rows_fleet, "read_file": _rows_read_file,
    "edit_sizes": _rows_edit_sizes,
    "edit_file": _rows_edit_file, "grep_tree": _rows_grep_tree, "cold_start": _rows_cold_start,
    "job_output": _rows_job_output, "mcp_call": _rows_mcp_call, "grep": _rows_grep,
    "sandbox_overhead": _rows_sandbox, "memory_docs": _rows_memory_docs,
    "hook_overhead": _rows_hook_overhead,
    "sessions": _rows_sessions, "http_sessions": _rows_http_sessions,
    "http_memory": _rows_http_memory, "ui": _rows_ui,
    "subagents": _rows_subagents,
    "serve_stdio": _rows_serve_stdio,
    "reference": _rows_reference,
    "skills_discovery": _rows_skills_discovery, "lsp_tools": _rows_lsp_tools,
    "permission_rules": _rows_permission_rules, "confinement_cost": _rows_confinement_cost,
}


# --- the machine -------------------------------------------------------------------------


def _first_line(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
        return (done.stdout or done.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "not found"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, Any]:
    rg = Path(sys.executable).with_name("rg")
    commit = _first_line(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    return {
        "platform": platform.platform(), "python": sys.version.split()[0],
        "cpus": os.cpu_count(), "load_before": _load(),
        "commit": commit,
        "tools": {
            "rg": _first_line([str(rg) if rg.exists() else "rg", "--version"]),
            "grep": _first_line(["grep", "--version"]),
            "tail": _first_line(["tail", "--version"]),
            "mcp": _version("mcp"), "matplotlib": _version("matplotlib"),
        },
    }


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# --- running -----------------------------------------------------------------------------


def run_child(name: str, smoke: bool, tmp: str | None, out_file: str) -> int:
    """``--child``: run one benchmark in this process and write its result as JSON."""
    result = BY_NAME[name].run(smoke, tmp)
    Path(out_file).write_text(json.dumps(result, default=str))
    return 0


def run_one(bench: Bench, smoke: bool, tmp: str | None, inline: bool) -> dict[str, Any]:
    started = time.perf_counter()
    entry: dict[str, Any] = {"title": bench.title, "owner": bench.owner, "load_before": _load(),
                             "started": dt.datetime.now().astimezone().isoformat(
                                 timespec="seconds")}
    missing = [m for m in bench.needs if importlib.util.find_spec(m) is None]
    if missing:
        entry["result"] = {"skipped": f"{', '.join(missing)} not installed"}
    elif inline:
        try:
            entry["result"] = json.loads(json.dumps(bench.run(smoke, tmp), default=str))
        except (Exception, SystemExit) as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"
    else:
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
            out_file = fh.name
        try:
            argv = [sys.executable, str(Path(__file__).resolve()), "--child", bench.name,
                    "--child-out", out_file] + (["--smoke"] if smoke else []) + \
                   (["--tmp", tmp] if tmp else [])
            done = subprocess.run(argv, capture_output=True, text=True, cwd=str(ROOT))
            if done.returncode == 0:
                entry["result"] = json.loads(Path(out_file).read_text())
            else:
                tail = "\n".join(done.stderr.strip().splitlines()[-6:])
                entry["error"] = f"exit {done.returncode}: {tail}"
        finally:
            os.unlink(out_file)
    entry["seconds"] = round(time.perf_counter() - started, 1)
    entry["load_after"] = _load()
    return entry


def run_all(names: list[str], smoke: bool, tmp: str | None, inline: bool,
            log: Any = sys.stderr, jobs: int = 1) -> dict[str, Any]:
    report: dict[str, Any] = {
        "started": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "mode": "smoke" if smoke else "full", "machine": machine(), "benchmarks": {},
    }
    if "edit_sizes" in names and not smoke:
        from _peers import ensure_peers

        python, reason = ensure_peers(True, log)
        report["machine"]["tools"]["openhands-aci"] = (
            _first_line([python, "-c", "import importlib.metadata as m; "
                                      "print(m.version('openhands-aci'))"]) if python
            else f"unavailable: {reason}")
    began = time.perf_counter()

    def one(name: str) -> dict[str, Any]:
        print(f"[{time.strftime('%H:%M:%S')}] {name} ...", file=log, flush=True)
        entry = run_one(BY_NAME[name], smoke, tmp, inline)
        status = entry.get("error") or "ok"
        print(f"    {name}: {entry['seconds']} s, load {entry['load_before']} -> "
              f"{entry['load_after']}: {status}", file=log, flush=True)
        return entry

    if jobs > 1:  # smoke only (main checks): benchmarks running at once disturb each other
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(jobs) as pool:
            entries = list(pool.map(one, names))
    else:
        entries = [one(name) for name in names]
    report["benchmarks"] = dict(zip(names, entries, strict=True))
    report["seconds"] = round(time.perf_counter() - began, 1)
    report["machine"]["load_after"] = _load()
    report["rows"] = [row for name, entry in report["benchmarks"].items()
                      for row in _rows_of(name, entry)]
    return report


def _rows_of(name: str, entry: dict[str, Any]) -> list[dict[str, Any]]:
    if "result" not in entry:
        return [_row(name, BY_NAME[name].title, "—", "—", None, "", None,
                     f"failed: {entry.get('error', '?')[:300]}")]
    try:
        return rows_for(name, entry["result"])
    except (KeyError, TypeError) as exc:
        return [_row(name, BY_NAME[name].title, "—", "—", None, "", None,
                     f"result not understood ({type(exc).__name__}: {exc})")]


# --- writing -----------------------------------------------------------------------------

COMMAND = "uv run --group bench python benchmarks/run.py"


def _mark(met: bool | None) -> str:
    return {True: "met", False: "**missed**", None: ""}[met]


def _cell(text: Any) -> str:
    return str(text if text is not None else "—").replace("|", "\\|").replace("\n", " ")


def render_markdown(report: dict[str, Any], plots: list[str]) -> str:
    m = report["machine"]
    lines = [
        "# callgate benchmarks",
        "",
        f"Generated by `benchmarks/run.py` ({report['mode']} run) on {report['started']}, "
        f"commit `{m['commit']}`, in {report['seconds']:.0f} s.",
        f"Machine: {m['platform']}, Python {m['python']}, {m['cpus']} CPUs shared with "
        f"other work; load average (1/5/15 min) {m['load_before']} before, "
        f"{m.get('load_after')} after.",
        "Peers: " + "; ".join(f"{k} {v}" for k, v in m["tools"].items()) + ".",
        "",
        "Each benchmark times callgate and its baseline in the same run, interleaved; "
        "figures are medians (p95 in brackets) and ratios are between medians. Absolute "
        "times drift with the machine's load; the ratios are the result. Reproduce with:",
        "",
        "```",
        COMMAND,
        "```",
        "",
        "| benchmark | what | callgate | baseline | ratio | target | result | note |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in report["rows"]:
        lines.append("| " + " | ".join(_cell(row[k]) for k in (
            "benchmark", "what", "callgate", "baseline", "ratio", "target")) +
            f" | {_mark(row['met'])} | {_cell(row['note'])} |")
    merged = [f"{n} ({e.get('started', '?')}, load {e['load_before']})"
              for n, e in report["benchmarks"].items() if e.get("merged")]
    if merged:
        lines += ["", "Measured in a later, separate invocation (`--merge`): "
                  + "; ".join(merged) + "."]
    met = [r for r in report["rows"] if r["met"] is True]
    missed = [r for r in report["rows"] if r["met"] is False]
    lines += ["", f"Targets: {len(met)} met, {len(missed)} missed. Why each miss happens, "
              "with its profile, is in [profiles.md](profiles.md).", ""]
    lines += _details(report)
    if plots:
        lines += ["## Plots", ""]
        lines += [f"![{Path(p).stem}]({p})" for p in plots]
        lines.append("")
    lines += ["## Load while each benchmark ran", "",
              "| benchmark | owner | seconds | load before | load after |",
              "| --- | --- | --- | --- | --- |"]
    for name, entry in report["benchmarks"].items():
        lines.append(f"| {name} | {entry['owner']} | {entry['seconds']} | "
                     f"{entry['load_before']} | {entry['load_after']} |")
    lines.append("")
    return "\n".join(lines)


def _details(report: dict[str, Any]) -> list[str]:
    out: list[str] = []
    cold = report["benchmarks"].get("cold_start", {}).get("result")
    if cold and "importtime" in cold:
        p = cold["phases_ms"]
        out += ["## What a cold `callgate tools` spends", "",
                f"Phases inside one process (median): import the core {p['import_core_ms']} ms, "
                f"import the plugins {p['import_plugins_ms']} ms, `Host.boot` with warm imports "
                f"{p['boot_ms']} ms (registration and schema checks), the CLI again with warm "
                f"imports {p['cli_warm_ms']} ms.", "",
                "| plugin | import ms |", "| --- | --- |"]
        for name, ms in sorted(p["plugins_ms"].items(), key=lambda kv: -kv[1]):
            out.append(f"| {name} | {ms} |")
        it = cold["importtime"]
        out += ["", f"`-X importtime` (median of runs; the tracing inflates it): "
                f"{it['imports_total_ms']} ms of imports in all.", "",
                "| root import (cumulative) | ms |", "| --- | --- |"]
        out += [f"| {k} | {v} |" for k, v in it["by_root_import_cumulative_ms"].items()]
        out += ["", "| package (self time) | ms |", "| --- | --- |"]
        out += [f"| {k} | {v} |" for k, v in it["by_package_self_ms"].items()]
        out.append("")
    edits = report["benchmarks"].get("edit_sizes", {}).get("result")
    if edits and "rows" in edits:
        out += ["## edit_file by file size (medians, ms)", "",
                "| size | plain | plain + dir fsync | edit_file | openhands-aci |",
                "| --- | --- | --- | --- | --- |"]
        for row in edits["rows"]:
            peer = (f"{row['openhands']['median']}" if "openhands" in row
                    else "refuses" if "openhands_refused" in row else "—")
            out.append(f"| {row['label']} | {row['plain']['median']} | "
                       f"{row['plain_dirsync']['median']} | {row['callgate']['median']} | "
                       f"{peer} |")
        out.append("")
    batch = report["benchmarks"].get("batch_io", {}).get("result")
    if batch and any("sweep" in (batch.get(k) or {}) for k in ("web_fetch", "mcp_slow")):
        out += ["## Batch size sweep (medians, ms)", "", "| calls in the batch | " +
                " | ".join(k for k in ("web_fetch", "mcp_slow") if "sweep" in
                           (batch.get(k) or {})) + " |", "| --- | --- | --- |"]
        keys = [k for k in ("web_fetch", "mcp_slow") if "sweep" in (batch.get(k) or {})]
        for n in batch[keys[0]]["sweep"]:
            out.append(f"| {n} | " + " | ".join(str(batch[k]["sweep"][n]["median"])
                                                for k in keys) + " |")
        out.append("")
    return out


def write_plots(report: dict[str, Any], out_dir: Path) -> list[str]:
    """PNG plots where a curve says more than a number; returns paths relative to out_dir."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (uv run --group bench ...): no plots",
              file=sys.stderr)
        return []
    plot_dir = out_dir / "plots"
    plot_dir.mkdir(exist_ok=True)
    made = []
    edits = report["benchmarks"].get("edit_sizes", {}).get("result")
    if edits and edits.get("rows"):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        sizes = [row["size"] for row in edits["rows"]]
        for key, label in (("plain", "plain read+replace+atomic write"),
                           ("plain_dirsync", "plain + directory fsync"),
                           ("callgate", "callgate edit_file"), ("openhands", "openhands-aci")):
            pts = [(row["size"], row[key]["median"]) for row in edits["rows"] if key in row]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [row["label"] for row in edits["rows"]])
        ax.set_xlabel("file size")
        ax.set_ylabel("one unique replacement, median ms")
        ax.set_title("Edit cost vs file size (openhands-aci refuses > 10 MiB)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(plot_dir / "edit_vs_size.png", dpi=110)
        plt.close(fig)
        made.append("plots/edit_vs_size.png")
    batch = report["benchmarks"].get("batch_io", {}).get("result")
    keys = [k for k in ("web_fetch", "mcp_slow") if "sweep" in ((batch or {}).get(k) or {})]
    if keys:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for key in keys:
            sweep = batch[key]["sweep"]
            ns = [int(n) for n in sweep]
            ax.plot(ns, [sweep[str(n)]["median"] for n in ns], marker="o",
                    label=f"{key}: one batch")
        one = batch[keys[0]]["one_call"]["median"]
        ns = [int(n) for n in batch[keys[0]]["sweep"]]
        ax.plot(ns, [n * one for n in ns], linestyle="--", label="one by one (n × one call)")
        ax.set_xlabel(f"calls in the batch (each waits ~{batch['delay_ms']} ms)")
        ax.set_ylabel("batch wall time, median ms")
        ax.set_yscale("log")
        ax.set_title("Concurrent read-only calls vs batch size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(plot_dir / "batch_vs_size.png", dpi=110)
        plt.close(fig)
        made.append("plots/batch_vs_size.png")
    cold = report["benchmarks"].get("cold_start", {}).get("result")
    if cold and "importtime" in cold:
        roots = cold["importtime"]["by_root_import_cumulative_ms"]
        names = list(roots)[:12][::-1]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        ax.barh(names, [roots[n] for n in names])
        ax.set_xlabel("ms under -X importtime (cumulative, first importer pays)")
        ax.set_title(f"Cold `callgate tools`: {cold['callgate_tools']['median']:.0f} ms median "
                     f"(python -c pass {cold['python_pass']['median']:.0f} ms)")
        fig.tight_layout()
        fig.savefig(plot_dir / "cold_start_imports.png", dpi=110)
        plt.close(fig)
        made.append("plots/cold_start_imports.png")
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma list of benchmark names")
    parser.add_argument("--skip", default="", help="comma list of benchmark names")
    parser.add_argument("--smoke", action="store_true", help="tiny inputs (a check, not a measure)")
    parser.add_argument("--inline", action="store_true", help="run in this process (smoke)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="with --smoke: run this many benchmarks at once, each in its own "
                             "process (a check of the harness, not a measure)")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--out", default=str(HERE), help="where results.{md,json} go")
    parser.add_argument("--tmp", default=None, help="where the big files are generated")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--merge", action="store_true",
                        help="add the benchmarks run now to --out's results.json (marked as "
                             "measured separately) instead of replacing it")
    parser.add_argument("--render", action="store_true",
                        help="only rewrite results.md and the plots from --out's results.json")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return run_child(args.child, args.smoke, args.tmp, args.child_out)
    if args.list:
        for b in BENCHMARKS:
            print(f"{b.name:18} {b.title}  [{b.owner}]")
        return 0
    out = Path(args.out)
    if args.render:
        report = json.loads((out / "results.json").read_text())
        report["rows"] = [row for name, entry in report["benchmarks"].items()
                          for row in _rows_of(name, entry)]
        (out / "results.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
        plots = [] if args.no_plots else write_plots(report, out)
        (out / "results.md").write_text(render_markdown(report, plots))
        return 0
    names = [b.name for b in BENCHMARKS]
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in BY_NAME]
        if unknown:
            parser.error(f"unknown benchmark(s): {', '.join(unknown)} (see --list)")
        names = [n for n in names if n in wanted]
    skip = {n.strip() for n in args.skip.split(",") if n.strip()}
    names = [n for n in names if n not in skip]
    if args.tmp:
        free = shutil.disk_usage(args.tmp).free
        print(f"free disk in {args.tmp}: {free / 2**30:.1f} GiB", file=sys.stderr)
    # every session the benchmarks open records into the private state directory that
    # _hermetic made at import (the children inherit it), gone with this process
    if args.jobs > 1 and (not args.smoke or args.inline):
        parser.error("--jobs needs --smoke and no --inline (figures measured at once are "
                     "not figures)")
    report = run_all(names, args.smoke, args.tmp, args.inline, jobs=args.jobs)
    if args.merge and (out / "results.json").exists():
        base = json.loads((out / "results.json").read_text())
        for name in names:
            base["benchmarks"][name] = {**report["benchmarks"][name], "merged": True}
        base["benchmarks"] = {b.name: base["benchmarks"][b.name] for b in BENCHMARKS
                              if b.name in base["benchmarks"]}
        base["rows"] = [row for name, entry in base["benchmarks"].items()
                        for row in _rows_of(name, entry)]
        report = base
    out.mkdir(parents=True, exist_ok=True)
    plots = [] if args.no_plots else write_plots(report, out)
    (out / "results.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    (out / "results.md").write_text(render_markdown(report, plots))
    failed = [n for n, e in report["benchmarks"].items() if "error" in e]
    print(f"wrote {out / 'results.md'} and results.json"
          + (f"; failed: {', '.join(failed)}" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
