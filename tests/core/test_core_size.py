"""The core distribution's size is a decision (issue 31): what the host need not enforce
lives in distributions above it (the provider renderings, the SQLite store backend, the
command line, ``callgate sessions``). Growing ``core/callgate`` past this count means
raising it here, in a change that says why; shrinking it means lowering it."""

from __future__ import annotations

from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core" / "callgate"

#: lines of every ``.py`` file of ``core/callgate`` (blank lines included), as of issue 31's
#: split (23,796 before it; 19,935 after it; +77 for execution facts in the store, issue 36;
#: +488 for the websocket transport with a bearer token, both ends, issue 37; +230 for the
#: cold start, issue 38: the entry-point reader boot lists plugins with instead of importing
#: importlib.metadata's ~45 modules, deferred's bound arguments, lazy imports; +546 for the
#: per-call path, issue 38: per-tool plans, the worker's cancel guard, the edit's held check;
#: +546 for a worker that outlives its host and the resume that reattaches to it, results
#: delivered to a worker and its file changes to the host, issue 37: the worker's far end is
#: the core's; +10 for starting its daemon through the spawn door; +870 for the plugin
#: manifest, issue 38: a listing boot (``callgate tools``) replays what plugins declared,
#: recorded by a full boot with what each one probed, keyed by the environment's
#: fingerprint and read only from the user's own state directory; +49 for recording off
#: the event loop, issue 38: the store writer builds a call's ops from the references the
#: loop queues (`_pipeline.record`'s builders, `Recorder.defer`), net of issue 31's folds of
#: the dispatch ladder, `begin_guarded` and the double check, -18; +11 for a proxy target's
#: validator found by the spec's identity, issue 38: not its schema serialised twice a call;
#: +51 for the result store settled on the store writer after each commit, issue 38
#: (`Recorder.after_commit`, `ResultStore.settle`), not on the event loop once per call;
#: +21 for the listing path's imports placed where they are used, issue 38: each deferred
#: import is a line and its blank line in the function that needs it; +6 for a resolved
#: path's display cut from its normalized form, issue 38: not ``os.path.relpath``'s
#: abspath/split passes on every read; +10 for a parent directory held by ``O_PATH`` to stat
#: and open a name in it, issue 38: no inotify event for the outside-change watcher per read
#: below the root; +11 for the manifest's keys holding checksums of variables and config
#: values, never the values, issue 38's review: a token in ``CALLGATE_TOKEN`` was written;
#: +8 for `ResultStore.link`, issue 38's review: a stored result handed to its record under
#: the store's lock, and unlinked when its call has no record, net of a dead branch, -5;
#: +6 for `Host._configured`, the review: the start a full and a listing boot share, once)
MAX_CORE_LINES = 22_875


def core_lines(root: Path = CORE) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in root.rglob("*.py"))


def test_the_core_is_no_larger_than_decided() -> None:
    lines = core_lines()
    assert lines <= MAX_CORE_LINES, (
        f"core/callgate is {lines} lines, over the {MAX_CORE_LINES} decided: move what the host "
        "need not enforce above the core, or raise MAX_CORE_LINES saying why"
    )


def test_the_count_sees_a_planted_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n\ny = 2\n")
    (tmp_path / "pkg" / "notes.md").write_text("not code\n")
    assert core_lines(tmp_path) == 3
