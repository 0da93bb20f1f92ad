"""Every benchmark of the suite runs end to end on tiny inputs (issue 11).

Benchmarks are measured by hand (``benchmarks/run.py``); these tests only keep
them from rotting: the runner drives each one at smoke scale, the report has a
row per benchmark and no timing is judged.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def smoke_report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("out")
    gen = tmp_path_factory.mktemp("gen")
    # four benchmarks at once, each in its own process: most of a smoke run is waiting for
    # servers and subprocesses (a check of the harness, so nothing is measured)
    done = subprocess.run([sys.executable, str(BENCH / "run.py"), "--smoke", "--jobs", "4",
                           "--no-plots", "--out", str(out), "--tmp", str(gen)],
                          capture_output=True, text=True, timeout=280, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "results.json").read_text())
    report["_markdown"] = (out / "results.md").read_text()
    report["_leftovers"] = sorted(p.name for p in gen.iterdir())
    report["_out"] = str(out)
    return report


def test_every_benchmark_ran_and_gave_rows(smoke_report: dict) -> None:
    run = _load("run")
    assert list(smoke_report["benchmarks"]) == [b.name for b in run.BENCHMARKS]
    for name, entry in smoke_report["benchmarks"].items():
        assert "error" not in entry, (name, entry.get("error"))
        assert "result" in entry, name
    named = {row["benchmark"] for row in smoke_report["rows"]}
    assert named == set(smoke_report["benchmarks"])
    for row in smoke_report["rows"]:
        assert row["met"] in (True, False, None), row
        assert "result not understood" not in row["note"] and "failed" not in row["note"], row


def test_every_benchmark_module_of_the_tree_is_run_by_the_harness() -> None:
    # issue 38: none left standalone (the helpers start with "_"; profile_misses profiles)
    modules = {p.stem for p in BENCH.glob("[a-z]*.py")} - {"run", "profile_misses"}
    assert modules == {b.name for b in _load("run").BENCHMARKS}


def test_every_row_of_a_benchmark_with_targets_says_its_target(smoke_report: dict) -> None:
    for row in smoke_report["rows"]:
        if "skipped" not in row["note"]:
            assert row["target"], row


def test_the_targets_of_issues_11_and_17_each_have_a_row(smoke_report: dict) -> None:
    targets = {row["target"] for row in smoke_report["rows"] if row["met"] is not None}
    for target in ("≤ 15 µs overhead", "≤ 40 µs overhead", "≥ 1.5× faster", "≤ 1.5× one call",
                   "≤ 1.5× tail", "≤ 5 ms", "≤ 1.5× plain", "≤ 200 ms",
                   "≤ 64 MiB", "≥ 0.5×"):
        assert target in targets, target


def test_the_targets_of_issue_38_each_have_a_row(smoke_report: dict) -> None:
    targets = {row["target"] for row in smoke_report["rows"] if row["met"] is not None}
    for target in ("≥ 2.0× faster", "≥ 1.0× the SDK (issue 38)", "≤ 1.0× the SDK (issue 38)",
                   "≤ 1.1× (issue 38)", "≤ 1.2×", "≤ 150 modules", "≤ 1.2× plain (issue 38)",
                   "≤ 1.1× rg (issue 38)"):
        assert target in targets, target


def test_results_markdown_has_the_table_and_the_reproduce_command(smoke_report: dict) -> None:
    text = smoke_report["_markdown"]
    assert "| benchmark | what | callgate | baseline | ratio | target | result | note |" in text
    assert "uv run --group bench python benchmarks/run.py" in text
    assert "## What a cold `callgate tools` spends" in text
    assert smoke_report["machine"]["cpus"] and smoke_report["machine"]["load_before"]


def test_big_files_are_deleted_afterwards(smoke_report: dict) -> None:
    assert smoke_report["_leftovers"] == []


def test_the_peer_editor_worker_reports_a_missing_openhands(smoke_report: dict) -> None:
    # The smoke run starts the worker under this interpreter, which has no openhands-aci:
    # the row is skipped with the worker's own reason instead of failing the run.
    result = smoke_report["benchmarks"]["edit_sizes"]["result"]
    assert result["openhands_aci"]["available"] is False
    assert "openhands-aci unavailable" in result["openhands_aci"]["reason"]
    assert [row["label"] for row in result["rows"]] == ["1 KiB", "64 KiB"]


def test_importtime_lines_are_summed_per_package_and_root() -> None:
    cold_start = _load("cold_start")
    text = "\n".join([
        "import time: self [us] | cumulative | imported package",
        "import time:       100 |        100 |     bs4.css",
        "import time:       400 |        500 |   bs4",
        "import time:       200 |        700 | callgate_web._tool",
        "import time:       300 |        300 | callgate",
        "noise that is not an import line",
    ])
    lines = cold_start.parse_importtime(text)
    assert lines[0] == (100, 100, 2, "bs4.css") and len(lines) == 4
    summary = cold_start.breakdown([lines])
    assert summary["by_package_self_ms"] == {"bs4": 0.5, "callgate": 0.3, "callgate_web": 0.2}
    assert summary["by_root_import_cumulative_ms"] == {"callgate_web": 0.7, "callgate": 0.3}
    assert summary["imports_total_ms"] == 1.0


def test_plots_are_pngs(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")  # a bench-group dependency, not a test one
    run = _load("run")
    timing = {"unit": "ms", "n": 1, "median": 1.0, "p95": 1.0, "min": 1.0}
    report = {"benchmarks": {
        "edit_sizes": {"result": {"rows": [
            {"size": 1024, "label": "1 KiB", "plain": timing, "plain_dirsync": timing,
             "callgate": timing, "openhands": timing}]}},
        "batch_io": {"result": {"delay_ms": 100, "web_fetch": {
            "one_call": timing, "sweep": {"1": timing, "2": timing}}}},
    }}
    made = run.write_plots(report, tmp_path)
    assert made == ["plots/edit_vs_size.png", "plots/batch_vs_size.png"]
    for rel in made:
        assert (tmp_path / rel).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_pipeline_profile_runs() -> None:
    import asyncio

    profile_misses = _load("profile_misses")
    text = asyncio.run(profile_misses._pipeline(50))
    assert text.startswith("50 calls,") and "run_batch" in text


def test_render_rewrites_the_table_from_the_json(smoke_report: dict, tmp_path: Path) -> None:
    source = json.loads((Path(smoke_report["_out"]) / "results.json").read_text())
    source["rows"] = []
    (tmp_path / "results.json").write_text(json.dumps(source))
    assert _load("run").main(["--render", "--no-plots", "--out", str(tmp_path)]) == 0
    rendered = json.loads((tmp_path / "results.json").read_text())
    assert rendered["rows"] == smoke_report["rows"]
    assert (tmp_path / "results.md").read_text() == smoke_report["_markdown"]
