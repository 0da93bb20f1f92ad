"""Issue 38: the rg engine runs rg parallel (no ``--sort path``, which walks on one thread)
and puts its files in ``--sort path``'s order itself; past a flood bound it falls back to
the ordered, early-stopping run. What the model reads is the same in both modes."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import callgate_search
import pytest
from callgate_search import _engine_rg
from callgate_search._rg import find_rg

RG = find_rg()
pytestmark = pytest.mark.skipif(RG is None, reason="no rg binary (the PyPI package ripgrep)")

# names that break a plain string sort of whole paths: "." and "-" sort before "/",
# uppercase before lowercase, "10" before "2", non-ASCII after ASCII (by UTF-8 bytes)
TRICKY = ["a/x", "a.b/x", "a-b/x", "a b/x", "A/x", "B/x", "a/b/x", "a/b.c/x", "a/b-c",
          "a/B/x", "a/Z", "a/_", "a.txt", "a-z", "a_", "1/x", "10/x", "2/x", "é/x", "Ä",
          "ä.txt", "日本/x", "z_/x", "x", "X", "x.y", "x-y", "deep/a/b/c/d.e/f"]


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every rg command line the engine starts, from now on."""
    seen: list[list[str]] = []
    real = _engine_rg.command

    def spy(*args: Any, **kwargs: Any) -> list[str]:
        argv = real(*args, **kwargs)
        seen.append(argv)
        return argv

    monkeypatch.setattr(_engine_rg, "command", spy)
    return seen


def _session(callgate_session: Any, root: Path, **config: Any) -> Any:
    return callgate_session(plugins=[callgate_search], workspace=root,
                            config={"search": {"grep_engine": "rg"}, **config})


def _paths(text: str) -> list[str]:
    """The files of a grep answer, in the order printed (one entry per file)."""
    out: list[str] = []
    for line in text.split("\n"):
        found = re.match(r"^(.*?)[:-]\d+[:-]", line)
        if found and (not out or out[-1] != found.group(1)):
            out.append(found.group(1))
    return out


def test_files_come_in_the_order_rg_sort_path_gives(callgate_session: Any, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, {rel: f"needle in {rel}\n" for rel in TRICKY})
    assert RG is not None
    listed = subprocess.run([RG, "--no-config", "-l", "--sort", "path", "needle", "."],
                            cwd=tmp_path, capture_output=True, text=True, check=True)
    expected = [p.removeprefix("./") for p in listed.stdout.splitlines()]
    assert sorted(expected) != expected  # the tree does break a plain string sort
    runs = _runs(monkeypatch)
    result = _session(callgate_session, tmp_path).call("grep", {"pattern": "needle"})
    assert not result.is_error, result.text
    assert _paths(result.text) == expected
    assert len(runs) == 1 and "--sort" not in runs[0]  # the parallel run put them in order


def test_the_default_run_does_not_ask_rg_to_sort(callgate_session: Any, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``--sort path`` makes rg walk on one thread: the default run never passes it."""
    _write(tmp_path, {"a.txt": "needle\n", "b/c.txt": "needle\n"})
    runs = _runs(monkeypatch)
    result = _session(callgate_session, tmp_path).call("grep", {"pattern": "needle"})
    assert result.text == "a.txt:1:needle\nb/c.txt:1:needle"
    assert len(runs) == 1
    assert "--sort" not in runs[0] and "--sortr" not in runs[0], runs[0]
    assert "--threads" not in runs[0] and "-j" not in runs[0], runs[0]


def _random_tree(seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    pieces = ["a", "A", "b", "1", "10", "2", ".", "-", "_", "é", "Ä", "日"]

    def name() -> str:  # few, short names: a folder "a" beside files "a.txt", "a-b", ...
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 3)))
        return "n" + text if text.startswith(".") or text in ("..", ".") else text

    dirs = [""]
    for _ in range(30):
        parent = rng.choice(dirs)
        dirs.append(f"{parent}{name()}/")
    files: dict[str, str] = {}
    for _ in range(160):
        rel = rng.choice(dirs) + name() + rng.choice(["", ".txt", ".py", ".log"])
        if any(rel.startswith(f"{other}/") for other in files) or \
                any(other.startswith(f"{rel}/") for other in files) or rel + "/" in dirs:
            continue
        lines = []
        for i in range(rng.randint(1, 25)):
            roll = rng.random()
            lines.append(f"needle {i} here" if roll < 0.04 else
                         f"NEEDLE {i} loud" if roll < 0.06 else f"filler line {i}")
        files[rel] = "\n".join(lines) + "\n"
    # what rg cannot judge alone, and what it is told to skip
    files[".gitignore"] = "*.log\n!keep.log\n!.hid*\n"
    files["keep.log"] = "needle kept\n"
    files[".hidden.txt"] = "needle hidden\n"
    files[f"{dirs[1]}.hidden/x.txt"] = "needle in a hidden folder\n"
    files[f"{dirs[2]}.env"] = "needle secret\n"
    files["node_modules/dep.js"] = "needle dep\n"
    files["__pycache__/m.txt"] = "needle cache\n"
    return files


REQUESTS: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "needle", "context": 2},
    {"pattern": "NEEDLE", "case_insensitive": True, "context": 1, "max_matches": 7},
    {"pattern": r"needle \d+", "max_matches": 3},
    {"pattern": "needle", "max_matches": 1},
    {"pattern": "needle", "glob": "*.txt"},
    {"pattern": "needle", "glob": "!*.py"},
    {"pattern": "needle", "glob": "**/b*/**"},
    {"pattern": "needle|filler", "max_matches": 200},
    {"pattern": "zzz_nothing"},
]


@pytest.mark.parametrize("seed", [3, 38])
def test_parallel_and_ordered_runs_print_the_same(callgate_session: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  seed: int) -> None:
    files = _random_tree(seed)
    _write(tmp_path, files)
    folders = sorted({rel.rsplit("/", 1)[0] for rel in files if "/" in rel})
    requests = [*REQUESTS, {"pattern": "needle", "path": folders[len(folders) // 2]},
                {"pattern": "needle", "path": folders[0], "context": 1},
                {"pattern": "needle", "path": next(r for r in files if r.endswith(".txt"))}]
    answered_parallel = 0
    broke_string_sort = False
    for deny in (False, True):
        s = _session(callgate_session, tmp_path, files={"read_denylist": deny})
        for args in requests:
            runs = _runs(monkeypatch)
            parallel = s.call("grep", args)
            assert "--sort" not in runs[0], (args, runs)
            answered_parallel += len(runs) == 1
            shown = list(dict.fromkeys(
                m["path"] for m in parallel.meta["structured_content"]["matches"]))
            broke_string_sort |= shown != sorted(shown)
            monkeypatch.setattr(_engine_rg, "FLOOD_BYTES", 0)  # any output floods: ordered
            runs.clear()
            ordered = s.call("grep", args)
            monkeypatch.undo()
            assert not parallel.is_error, (args, parallel.text)
            assert parallel.text == ordered.text, args
            assert parallel.meta["structured_content"] == ordered.meta["structured_content"]
            if ordered.text != "(no matches)":  # the ordered run did run, sorted
                assert "--sort" in runs[-1], runs
    # most requests are answered by the parallel run alone; the rest flooded
    assert answered_parallel >= len(requests), answered_parallel
    assert broke_string_sort  # the tree puts files where a plain string sort would not


def test_a_flood_falls_back_to_the_ordered_run(callgate_session: Any, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the flood bound the parallel rg is stopped and the ordered run answers: still
    the first matches in path order, and the truncation notice."""
    _write(tmp_path, {rel: "needle one\nfiller\nneedle two\n" for rel in TRICKY})
    assert RG is not None
    listed = subprocess.run([RG, "--no-config", "-n", "--sort", "path", "needle", "."],
                            cwd=tmp_path, capture_output=True, text=True, check=True)
    first = [line.removeprefix("./") for line in listed.stdout.splitlines()][:5]
    monkeypatch.setattr(_engine_rg, "FLOOD_MATCHES_PER_CAP", 1)
    monkeypatch.setattr(_engine_rg, "FLOOD_BYTES", 600)  # a begin and a match or two
    runs = _runs(monkeypatch)
    result = _session(callgate_session, tmp_path).call("grep",
                                                       {"pattern": "needle", "max_matches": 5})
    assert result.text.split("\n") == [
        *first, "... (truncated at 5 matches; narrow the pattern, path or glob)"]
    assert result.meta["truncated"] is True
    assert len(runs) == 2, runs
    assert "--sort" not in runs[0] and runs[1][runs[1].index("--sort") + 1] == "path"


def test_the_flood_bound_counts_match_lines_against_the_cap(
        callgate_session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to FLOOD_MATCHES_PER_CAP x the cap the parallel run answers alone; past it the
    ordered run takes over (the bytes bound is far away here)."""
    per_cap = _engine_rg.FLOOD_MATCHES_PER_CAP
    _write(tmp_path, {f"f{i:02}.txt": "needle\n" for i in range(12 * per_cap)})
    runs = _runs(monkeypatch)
    s = _session(callgate_session, tmp_path)
    at_bound = s.call("grep", {"pattern": "needle", "max_matches": 12})
    assert len(runs) == 1
    runs.clear()
    past = s.call("grep", {"pattern": "needle", "max_matches": 11})
    assert len(runs) == 2 and "--sort" not in runs[0] and "--sort" in runs[1]
    assert at_bound.text.split("\n")[:11] == past.text.split("\n")[:11] == \
        [f"f{i:02}.txt:1:needle" for i in range(11)]
    assert past.text.endswith("(truncated at 11 matches; narrow the pattern, path or glob)")


SLOW_RG = """\
import json, sys, time
def say(kind, **data):
    print(json.dumps({"type": kind, "data": data}), flush=True)
if "--sort" in sys.argv:
    say("begin", path={"text": "./a.txt"})
    say("match", path={"text": "./a.txt"}, lines={"text": "needle\\n"}, line_number=1)
    say("end", path={"text": "./a.txt"})
else:
    say("begin", path={"text": "./b.txt"})
    say("match", path={"text": "./b.txt"}, lines={"text": "needle b\\n"}, line_number=1)
    say("end", path={"text": "./b.txt"})
    say("begin", path={"text": "./a.txt"})
    say("match", path={"text": "./a.txt"}, lines={"text": "needle\\n"}, line_number=1)
    say("end", path={"text": "./a.txt"})
sys.stdout.write('{"type":"begin","data":{"path":{"te')  # cut off mid-line by the kill
sys.stdout.flush()
time.sleep(120)
"""


@pytest.mark.parametrize("mode", ["parallel", "ordered"])
def test_the_deadline_stops_rg_in_both_modes(callgate_session: Any, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             mode: str) -> None:
    """rg that never ends is killed at the deadline; what it reported is kept (in path
    order) above the timed-out line, and the message it was cut off in is dropped."""
    fake = tmp_path / "bin" / "rg"
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable} -IS\n{SLOW_RG}")
    fake.chmod(0o755)
    monkeypatch.setattr(callgate_search.plugin, "find_rg", lambda: str(fake))
    ws = tmp_path / "ws"
    _write(ws, {"a.txt": "needle\n", "b.txt": "needle b\n"})
    if mode == "ordered":
        monkeypatch.setattr(_engine_rg, "FLOOD_BYTES", 0)
    runs = _runs(monkeypatch)
    s = _session(callgate_session, ws, search={"grep_engine": "rg", "timeout_s": 3})
    result = s.call("grep", {"pattern": "needle", "path": "."})
    timed_out = "... (timed out after 3 s; results incomplete; narrow the path or pattern)"
    if mode == "parallel":
        assert result.text.split("\n") == ["a.txt:1:needle", "b.txt:1:needle b", timed_out]
        assert len(runs) == 1
    else:
        assert result.text.split("\n") == ["a.txt:1:needle", timed_out]
        assert len(runs) == 2
    # timed out, not ended: rg was still running (it sleeps 120 s), and the answer came
    # back, so it was killed (the engine waits for it)
    assert result.meta["timed_out"] is True


@pytest.mark.parametrize("mode", ["parallel", "ordered"])
def test_cancelling_the_batch_stops_rg_in_both_modes(callgate_session: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     mode: str) -> None:
    """rg that never ends is killed when the batch is cancelled (the deadline is an hour
    away), in the parallel run and in the ordered one a flood falls back to."""
    started = tmp_path / "started"
    fake = tmp_path / "bin" / "rg"
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable} -IS\n"
                    f"import sys, time\nprint('{{\"type\":\"summary\",\"data\":{{}}}}', "
                    f"flush=True)\n"
                    f"if '--sort' in sys.argv or {mode == 'parallel'}:\n"
                    f"    open({str(started)!r}, 'w').close()\n"
                    f"time.sleep(600)\n")
    fake.chmod(0o755)
    monkeypatch.setattr(callgate_search.plugin, "find_rg", lambda: str(fake))
    ws = tmp_path / "ws"
    _write(ws, {"a.txt": "needle\n"})
    if mode == "ordered":
        monkeypatch.setattr(_engine_rg, "FLOOD_BYTES", 0)
    runs = _runs(monkeypatch)
    s = _session(callgate_session, ws, search={"grep_engine": "rg", "timeout_s": 3600})

    def cancel_once_rg_runs() -> None:
        for _ in range(600):
            if started.exists():
                break
            time.sleep(0.05)
        s.session.cancel()

    canceller = threading.Thread(target=cancel_once_rg_runs)
    canceller.start()
    result = s.call("grep", {"pattern": "needle"})
    canceller.join()
    assert started.exists(), "the stand-in rg never started"
    assert result.is_error and "grep: cancelled before the search finished" in result.text, \
        result.text
    assert len(runs) == (1 if mode == "parallel" else 2)
