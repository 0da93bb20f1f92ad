"""Cold start: a fresh ``callgate tools`` process vs ``python -c pass``, and what dominates it.

In one run, interleaved (so load drift hits every command alike), each a new
process from an empty temporary directory with every installed plugin:

- ``python -c pass`` (the interpreter alone, same venv);
- ``python -c "import pluggy, attrs, cattrs, jsonschema"`` (the core's own dependencies);
- ``callgate tools`` (the console script) with the plugin manifest warm (issue 38, third
  round: the manifest in the user's state directory lists what every plugin declared, so
  no plugin is imported), the usual case after the first run;
- ``callgate tools`` with no manifest (``callgate_tools_no_manifest``: a fresh state
  directory per run, as the first run after an install: import, load every entry-point
  plugin, register and check every schema, print the surface, write the manifest).

Then what dominates it: ``-X importtime`` of ``callgate tools`` (median of a few
runs) summed per top-level package (self time) and per plugin (cumulative), and
a phase split measured inside one process through the public API (import the
core, import each plugin, ``Host.boot``, the CLI again with warm imports).
Targets: ``callgate tools`` <= 200 ms on this machine (issue 17; issue 11's was 300 ms);
<= 1.2x ``import pluggy, attrs, jsonschema`` and <= 150 modules imported beyond the
interpreter's own (issue 38; the module count does not depend on the machine's load).

    uv run --group bench python benchmarks/cold_start.py [--repeat 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import summary

IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)\s*$")

PHASES = r"""
import contextlib, io, json, sys, time
t0 = time.perf_counter()
import callgate, callgate_cli.cli
t1 = time.perf_counter()
from importlib import metadata
plugins = {}
for ep in sorted(metadata.entry_points(group="callgate"), key=lambda e: e.name):
    t = time.perf_counter()
    try:
        ep.load()
    except Exception:
        continue
    plugins[ep.name] = round((time.perf_counter() - t) * 1000, 1)
t2 = time.perf_counter()
host = callgate.Host.boot(None)
t3 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    callgate_cli.cli.main(["tools"])
t4 = time.perf_counter()
ms = lambda a, b: round((b - a) * 1000, 1)
print(json.dumps({"import_core_ms": ms(t0, t1), "import_plugins_ms": ms(t1, t2),
                  "plugins_ms": plugins, "boot_ms": ms(t2, t3),
                  "cli_warm_ms": ms(t3, t4), "tools": len(host.visible_names())}))
"""


def callgate_command() -> list[str]:
    """The ``callgate`` console script next to this interpreter (else ``-m callgate_cli``)."""
    script = Path(sys.executable).with_name("callgate.exe" if os.name == "nt" else "callgate")
    if script.exists():
        return [str(script), "tools"]
    return [sys.executable, "-m", "callgate_cli", "tools"]


def commands() -> dict[str, list[str]]:
    return {
        "python_pass": [sys.executable, "-c", "pass"],
        "python_core_deps": [sys.executable, "-c", "import pluggy, attrs, cattrs, jsonschema"],
        # issue 38's baseline: the three libraries a registry needs at boot
        "python_issue38_deps": [sys.executable, "-c", "import pluggy, attrs, jsonschema"],
        "callgate_tools": callgate_command(),
    }


SYS_MODULES_TOOLS = """
import contextlib, io
from callgate_cli.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["tools"])
"""


def _modules(cwd: str, code: str, fresh: bool) -> int:
    """How many modules ``python -c CODE`` leaves in ``sys.modules`` beyond ``pass``."""
    env = _fresh_home(cwd) if fresh else None
    script = "import sys; before = set(sys.modules)\n" + code + \
        "\nprint(len(set(sys.modules) - before))"
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1])


def _fresh_home(cwd: str) -> dict[str, str]:
    """The environment of a run with an empty state directory: no plugin manifest."""
    return {**os.environ, "CALLGATE_HOME": tempfile.mkdtemp(dir=cwd, prefix="home-")}


def _run(argv: list[str], cwd: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-500:]}")
    return elapsed, done.stderr


def parse_importtime(text: str) -> list[tuple[int, int, int, str]]:
    """``(self_us, cumulative_us, depth, module)`` per line of ``-X importtime`` output."""
    out = []
    for line in text.splitlines():
        found = IMPORT_LINE.match(line)
        if found:
            self_us, cum_us, indent, name = found.groups()
            out.append((int(self_us), int(cum_us), len(indent) // 2, name))
    return out


def breakdown(runs: list[list[tuple[int, int, int, str]]], top: int = 15) -> dict[str, Any]:
    """Median over runs of: self time per top-level package, cumulative time per root
    import (what each top-level import, a plugin or the core, pulled in first), and the
    modules with the most self time."""
    per_package: dict[str, list[float]] = defaultdict(list)
    per_plugin: dict[str, list[float]] = defaultdict(list)
    per_module: dict[str, list[float]] = defaultdict(list)
    totals = []
    for lines in runs:
        package_sum: dict[str, int] = defaultdict(int)
        root_sum: dict[str, int] = defaultdict(int)
        for self_us, cum_us, depth, name in lines:
            package_sum[name.split(".")[0]] += self_us
            per_module[name].append(self_us / 1000)
            if depth == 0:  # disjoint subtrees: the first importer pays for shared deps
                root_sum[name.split(".")[0]] += cum_us
        for package, value in package_sum.items():
            per_package[package].append(value / 1000)
        for root, value in root_sum.items():
            per_plugin[root].append(value / 1000)
        totals.append(sum(self_us for self_us, *_ in lines) / 1000)

    def ranked(table: dict[str, list[float]], n: int) -> dict[str, float]:
        medians = {k: round(statistics.median(v), 1) for k, v in table.items()}
        return dict(sorted(medians.items(), key=lambda kv: -kv[1])[:n])

    return {
        "imports_total_ms": round(statistics.median(totals), 1),
        "by_package_self_ms": ranked(per_package, top),
        "by_root_import_cumulative_ms": ranked(per_plugin, top),
        "top_modules_self_ms": ranked(per_module, top),
    }


def run(repeat: int = 10, importtime_runs: int = 3, warmup: bool = True) -> dict[str, Any]:
    cmds = commands()
    samples: dict[str, list[float]] = {name: [] for name in cmds}
    with tempfile.TemporaryDirectory(prefix="callgate-bench-cold-") as cwd:
        for argv in cmds.values() if warmup else ():  # warm-up: page cache, .pyc files
            _run(argv, cwd)
        samples["callgate_tools_no_manifest"] = []
        for _ in range(repeat):
            for name, argv in cmds.items():
                samples[name].append(_run(argv, cwd)[0])
            samples["callgate_tools_no_manifest"].append(
                _run(cmds["callgate_tools"], cwd, _fresh_home(cwd))[0])
        env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
        # the manifest keeps what a plugin read of the environment (the sandbox reads
        # every variable): a run with one more variable records its own declarations once
        _run(cmds["callgate_tools"], cwd, env)
        traces = [parse_importtime(_run(cmds["callgate_tools"], cwd, env)[1])
                  for _ in range(importtime_runs)]
        traced_fresh = {**_fresh_home(cwd), "PYTHONPROFILEIMPORTTIME": "1"}
        no_manifest = parse_importtime(_run(cmds["callgate_tools"], cwd, traced_fresh)[1])
        # exact (sys.modules: -X importtime misses what importlib.import_module loads, as
        # entry points are): warm manifest, no manifest, the three libraries
        counted = {name: _modules(cwd, code, fresh) for name, code, fresh in (
            ("warm_manifest", SYS_MODULES_TOOLS, False), ("no_manifest", SYS_MODULES_TOOLS, True),
            ("issue38_deps", "import pluggy, attrs, jsonschema", False))}
        interpreter = parse_importtime(_run(cmds["python_pass"], cwd, env)[1])
        phases = [json.loads(subprocess.run([sys.executable, "-c", PHASES], cwd=cwd,
                                            capture_output=True, text=True,
                                            check=True).stdout)
                  for _ in range(importtime_runs)]
    out: dict[str, Any] = {name: summary(values) for name, values in samples.items()}
    out["callgate_tools_minus_python_ms"] = round(
        out["callgate_tools"]["median"] - out["python_pass"]["median"], 1)
    out["callgate_tools_vs_python_pass"] = round(
        out["callgate_tools"]["median"] / out["python_pass"]["median"], 2)
    out["callgate_tools_vs_issue38_deps"] = round(
        out["callgate_tools"]["median"] / out["python_issue38_deps"]["median"], 2)
    out["callgate_tools_no_manifest_vs_issue38_deps"] = round(
        out["callgate_tools_no_manifest"]["median"] / out["python_issue38_deps"]["median"], 2)
    out["importtime"] = breakdown(traces)
    # load-independent: the modules `callgate tools` imports beyond the interpreter's own
    out["modules_imported"] = len({t[3] for t in traces[0]} - {t[3] for t in interpreter})
    out["modules_imported_no_manifest"] = len(
        {t[3] for t in no_manifest} - {t[3] for t in interpreter})
    out["sys_modules_added"] = counted
    keys = ("import_core_ms", "import_plugins_ms", "boot_ms", "cli_warm_ms")
    out["phases_ms"] = {k: round(statistics.median(p[k] for p in phases), 1) for k in keys}
    out["phases_ms"]["plugins_ms"] = {
        name: round(statistics.median(p["plugins_ms"].get(name, 0) for p in phases), 1)
        for name in phases[0]["plugins_ms"]}
    out["tools_listed"] = phases[0]["tools"]
    out["targets"] = {"callgate_tools_ms_max": 200, "vs_issue38_deps_max": 1.2,
                      "modules_imported_max": 150}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--importtime-runs", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.repeat, args.importtime_runs)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for name in [*commands(), "callgate_tools_no_manifest"]:
        row = result[name]
        print(f"{name:18} median {row['median']:7.1f} ms  p95 {row['p95']:7.1f} ms")
    print("phases:", json.dumps(result["phases_ms"]))
    print("imports by package (self ms):", json.dumps(result["importtime"]["by_package_self_ms"]))
    print("by root import (cumulative ms):",
          json.dumps(result["importtime"]["by_root_import_cumulative_ms"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
