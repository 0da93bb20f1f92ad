"""Skill and slash-command discovery over 1,000 skill folders, beside a plain directory walk
of the same tree, in one run (issue 20).

The tree is generated into a temporary workspace: ``.claude/skills/skill-NNNN/SKILL.md``
(front matter and a short body; every tenth folder also has ``references/`` and
``scripts/``) and 50 command files in ``.claude/commands`` (some in sub folders).
``$HOME`` and ``$CALLGATE_HOME`` point into the temporary directory. Rounds are
interleaved (tool, baselines) after a warm-up, so every figure sees the same page cache
and load; figures are medians, ratios are between medians of the same run:

- ``cold``: `callgate_skills.discover` after its cache is cleared (every SKILL.md read
  and its YAML parsed);
- ``warm``: the same call with the cache kept (one stat per root and per skill folder);
- ``warm_stat``: warm with the inotify feed off (what a non-Linux host gets: one stat per
  root and per skill folder);
- ``edited``: the call right after one SKILL.md was rewritten (that one file re-read);
- ``index``: ``session.extension(SKILLS).index()`` (warm), what an integrator calls per turn;
- ``slash_list``: ``slash_command`` with no command through ``Session.run_batch`` (the
  command files, the 1,000 skills as commands, shaping), warm;
- ``walk``: ``os.walk`` of the skills root (every folder and file name, no reads);
- ``scandir``: one ``os.scandir`` of the root plus an ``os.stat`` of each SKILL.md (the
  least a change check can do without a watcher).

Target: warm ≤ 5 ms per call.

    .venv/bin/python benchmarks/skills_discovery.py [--skills 1000] [--repeat 15] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
from callgate_skills import SKILLS

TARGET_WARM_MS = 5.0


def make_tree(workspace: Path, count: int) -> Path:
    root = workspace / ".claude" / "skills"
    for i in range(count):
        folder = root / f"skill-{i:04d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Does task number {i} when the user asks "
            f"for it\nallowed-tools: [read_file, grep]\nlicense: MIT\n---\n\n# Skill {i}\n\n"
            + "Step one. Step two. Step three.\n"
            * 10
        )
        if i % 10 == 0:
            (folder / "references").mkdir()
            (folder / "references" / "guide.md").write_text("guide\n")
            (folder / "scripts").mkdir()
            (folder / "scripts" / "run.py").write_text("print('x')\n")
    commands = workspace / ".claude" / "commands"
    for i in range(50):
        sub = commands / (f"group{i % 5}" if i % 2 else "")
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"cmd-{i:02d}.md").write_text(
            f"---\ndescription: command {i}\nargument-hint: <x>\n---\nDo $ARGUMENTS\n"
        )
    return root


def _walk(root: Path) -> int:
    n = 0
    for _, _, files in os.walk(root):
        n += len(files)
    return n


def _scandir(root: Path) -> int:
    n = 0
    with os.scandir(root) as it:
        for entry in it:
            try:
                os.stat(os.path.join(entry.path, "SKILL.md"))
                n += 1
            except OSError:
                pass
    return n


def _ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1e3, 3)


def run(skills: int = 1000, repeat: int = 15) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="callgate-bench-skills-"))
    saved = {k: os.environ.get(k) for k in ("HOME", "CALLGATE_HOME", "CALLGATE_CONFIG_HOME")}
    os.environ["HOME"] = str(tmp / "home")
    os.environ["CALLGATE_HOME"] = str(tmp / "state")
    os.environ["CALLGATE_CONFIG_HOME"] = str(tmp / "config")
    (tmp / "home").mkdir()
    try:
        import callgate_commands
        import callgate_skills
        from callgate import ToolCall, sync
        from callgate_skills import _catalog, _watch
        from callgate_toolkit.watch import DirectoryWatcher

        stat_only = _watch.RootWatch(DirectoryWatcher(enabled=False))

        workspace = tmp / "ws"
        root = make_tree(workspace, skills)
        ws = os.path.realpath(workspace)
        host = sync.Host.boot({}, plugins=[callgate_skills, callgate_commands], surface="full")
        session = host.open_session(ws)
        times: dict[str, list[float]] = {
            k: []
            for k in (
                "cold",
                "warm",
                "warm_stat",
                "edited",
                "index",
                "slash_list",
                "walk",
                "scandir",
            )
        }

        def timed(key: str, fn: Any) -> Any:
            started = time.perf_counter()
            out = fn()
            times[key].append(time.perf_counter() - started)
            return out

        edited = root / f"skill-{skills // 2:04d}" / "SKILL.md"
        original = edited.read_text()
        found = 0
        for round_no in range(repeat + 1):
            callgate_skills.clear_cache()
            found = len(timed("cold", lambda: callgate_skills.discover(ws, {})).skills)
            timed("warm", lambda: callgate_skills.discover(ws, {}))
            watch = _catalog.WATCH
            _catalog.WATCH = stat_only
            callgate_skills.discover(ws, {})  # the stat-signed scan, once
            timed("warm_stat", lambda: callgate_skills.discover(ws, {}))
            _catalog.WATCH = watch
            callgate_skills.discover(ws, {})  # watched again
            edited.write_text(original + f"\nround {round_no}\n")
            timed("edited", lambda: callgate_skills.discover(ws, {}))
            timed("index", lambda: session.session.extension(SKILLS).index())
            [result] = timed(
                "slash_list", lambda: session.run_batch([ToolCall("l", "slash_command", {})])
            )
            assert not result.is_error, result.text
            timed("walk", lambda: _walk(root))
            timed("scandir", lambda: _scandir(root))
            if round_no == 0:  # the warm-up round
                for values in times.values():
                    values.clear()
        session.close()
        host.close()
        medians = {k: _ms(v) for k, v in times.items()}
        return {
            "skills": skills,
            "found": found,
            "repeat": repeat,
            "median_ms": medians,
            "ratios": {
                "warm_vs_walk": round(medians["warm"] / medians["walk"], 4),
                "warm_vs_scandir": round(medians["warm"] / medians["scandir"], 4),
                "warm_stat_vs_scandir": round(medians["warm_stat"] / medians["scandir"], 2),
                "cold_vs_walk": round(medians["cold"] / medians["walk"], 2),
                "edited_vs_cold": round(medians["edited"] / medians["cold"], 3),
            },
            "target_warm_ms": TARGET_WARM_MS,
            "warm_met": medians["warm"] <= TARGET_WARM_MS,
            "warm_stat_met": medians["warm_stat"] <= TARGET_WARM_MS,
            "python": sys.version.split()[0],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for key, value in saved.items():  # run.py --inline runs later benchmarks here
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.skills, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    m = result["median_ms"]
    print(f"{result['found']} skills, median of {result['repeat']} rounds (ms):")
    for key in ("cold", "warm", "warm_stat", "edited", "index", "slash_list", "walk", "scandir"):
        print(f"  {key:<11} {m[key]:>9.3f}")
    r = result["ratios"]
    print(
        f"  warm / os.walk {r['warm_vs_walk']}x, warm / scandir+stat {r['warm_vs_scandir']}x,"
        f" warm_stat / scandir+stat {r['warm_stat_vs_scandir']}x,"
        f" cold / os.walk {r['cold_vs_walk']}x, edited / cold {r['edited_vs_cold']}x"
    )
    print(f"  target warm <= {TARGET_WARM_MS} ms: {'met' if result['warm_met'] else 'missed'}")


if __name__ == "__main__":
    main()
