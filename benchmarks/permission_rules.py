"""Cost of the permission step for a shell command against 8 rules (issue 16).

Compares, in one run, this tree's `RuleEngine.decide` (a bash grammar, wrappers,
undecidable parts, redirections judged by Edit rules) with the engine of a
baseline git ref (default ``main``: the quote-aware splitter), loaded from
``git archive`` under another package name. Each engine judges:

- ``repeated``: the same compound command again and again (both engines cache a
  line's analysis, as a model re-running ``npm test`` does);
- ``distinct``: a new command line every call (the caches never hit), plain words;
- ``distinct, quoted``: the same with quotes, a substitution and a redirection
  (the grammar path here).

Reports median and p95 per decision in microseconds and the ratio new/baseline.

    uv run python benchmarks/permission_rules.py [--calls 4000] [--baseline main]
"""

from __future__ import annotations

import argparse
import importlib
import io
import itertools
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
from _timing import summary

RULES = {
    "mode": "ask",
    "allow": ["Bash(git status:*)", "Bash(npm test:*)", "Bash(ls:*)", "Bash(echo:*)",
              "Edit(out/**)"],
    "ask": ["Bash(git push:*)"],
    "deny": ["Bash(rm -rf:*)", "Bash(curl:*)"],
}
REPEATED = "git status && npm test | tee log.txt; ls -la && echo done"
PLAIN = "git status && npm test -- --shard {i} | tee log{i}.txt; ls -la src{i} && echo done"
QUOTED = 'git status && echo "built $(date) #{i}" > out/log{i}.txt; ls -la \'src {i}\''


def load_baseline(ref: str, into: Path) -> Any:
    """``callgate`` as it is at ``ref``, importable as ``callgate_baseline``."""
    root = Path(__file__).resolve().parents[1]
    data = subprocess.run(["git", "archive", ref, "core/callgate"], cwd=root, check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    (into / "core" / "callgate").rename(into / "callgate_baseline")
    sys.path.insert(0, str(into))
    return importlib.import_module("callgate_baseline")


def engine_of(package: Any) -> tuple[Any, Any]:
    permissions = importlib.import_module(f"{package.__name__}._permissions")
    if not hasattr(permissions, "RuleEngine"):  # the layered core (issue 31): a package
        permissions = importlib.import_module(f"{package.__name__}._permissions.rules")
    spec = package.ToolSpec(name="bash", description="Run a command.",
                            schema={"type": "object"}, groups=("Bash",),
                            permission_subject=package.PermissionSubject("command",
                                                                         ("command",)))
    if not hasattr(permissions, "SubjectKind"):  # a tree before the shell supplied `command`
        return permissions.RuleEngine(RULES, {"bash": spec}), spec
    from callgate_commandline import COMMAND

    return permissions.RuleEngine(RULES, {"bash": spec}, kinds={"command": COMMAND}), spec


def time_decisions(engine: Any, spec: Any, commands: Any, calls: int) -> list[float]:
    samples = []
    for _ in range(calls):
        arguments = {"command": next(commands)}
        started = time.perf_counter()
        engine.decide("bash", spec, arguments)
        samples.append(time.perf_counter() - started)
    return samples[calls // 10:]  # the first tenth is warm-up


def run(calls: int = 4000, baseline_ref: str = "main") -> dict[str, Any]:
    """Each case timed on this tree's engine and on ``baseline_ref``'s, in one process."""
    import callgate

    with tempfile.TemporaryDirectory() as tmp:
        baseline = load_baseline(baseline_ref, Path(tmp))
        engines = {"new": engine_of(callgate), "baseline": engine_of(baseline)}
        report: dict[str, Any] = {"rules": sum(len(v) for k, v in RULES.items() if k != "mode"),
                                  "baseline_ref": baseline_ref, "calls": calls}
        for case, template in (("repeated", None), ("distinct", PLAIN),
                               ("distinct, quoted", QUOTED)):
            row: dict[str, Any] = {}
            for name, (engine, spec) in engines.items():
                counter = itertools.count()
                commands = itertools.repeat(REPEATED) if template is None else (
                    template.format(i=f"{name}{next(counter)}") for _ in itertools.count())
                row[name] = summary(time_decisions(engine, spec, commands, calls), "us")
            row["ratio"] = round(row["new"]["median"] / row["baseline"]["median"], 2)
            report[case] = row
        verdict = engines["new"][0].decide("bash", engines["new"][1], {
            "command": QUOTED.format(i=0)})
        report["example"] = {"command": QUOTED.format(i=0), "decision": verdict.action
                             if verdict else "fallback"}
        sys.path.remove(tmp)
        for name in [m for m in sys.modules if m.split(".")[0] == "callgate_baseline"]:
            del sys.modules[name]
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--baseline", default="main")
    opts = parser.parse_args()
    print(json.dumps(run(opts.calls, opts.baseline), indent=2))


if __name__ == "__main__":
    main()
