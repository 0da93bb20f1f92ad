"""search.md §6.37: grep is time-bounded, and the Python engine does not hold the GIL."""

from __future__ import annotations

import threading
import time

import callgate_search

from .helpers import reader_plugin

SLOW_LINE = "a" * 40 + "!"
TIMED_OUT = "... (timed out after 2 s; results incomplete; narrow the path or pattern)"


def _session(callgate_session, engine, **kwargs):
    return callgate_session(plugins=[callgate_search, reader_plugin()],
                            files={"f.txt": SLOW_LINE + "\n", "other.txt": "hello\n"},
                            config={"search": {"grep_engine": engine, "timeout_s": 2}}, **kwargs)


def test_nested_quantifier_without_backtracking_blowup_finishes(callgate_session):
    for engine in ("rg", "python"):
        s = _session(callgate_session, engine)
        r = s.call("grep", {"pattern": "(a+)+$"})
        assert r.text == "(no matches)" and r.meta["engine"] == engine
        assert not r.meta.get("timed_out")


def test_catastrophic_pattern_times_out_in_python_and_not_in_rg(callgate_session):
    s = _session(callgate_session, "rg")
    r = s.call("grep", {"pattern": "(a|aa)+$"})
    assert r.text == "(no matches)" and not r.meta.get("timed_out")

    s = _session(callgate_session, "python")
    other = callgate_session(host=s.host, workspace=s.workspace)
    box: dict[str, object] = {}

    def slow() -> None:
        box["started"] = time.monotonic()
        box["result"] = s.call("grep", {"pattern": "(a|aa)+$"})
        box["ended"] = time.monotonic()

    worker = threading.Thread(target=slow)
    worker.start()
    time.sleep(0.5)  # the python engine is now inside regex matching
    began = time.monotonic()
    [read] = other.run({"name": "read_file", "arguments": {"path": "other.txt"}})
    read_done = time.monotonic()
    worker.join(30)
    assert not worker.is_alive()
    assert "hello" in read.text and not read.is_error
    # the read finished while the Python engine was still matching (it holds no GIL and no
    # session-wide lock); an order, not a time bound, so a loaded machine cannot fail it
    assert began < read_done < box["ended"], (began, read_done, box["ended"])
    result = box["result"]
    assert result.text == TIMED_OUT
    assert result.meta["timed_out"] is True and result.meta["engine"] == "python"


def test_partial_results_are_kept_before_the_timeout_line(callgate_session):
    s = callgate_session(plugins=[callgate_search],
                         files={"a.txt": "aaaa\n", "b.txt": SLOW_LINE + "\n"},
                         config={"search": {"grep_engine": "python", "timeout_s": 2}})
    r = s.call("grep", {"pattern": "^(a|aa)+$"})
    assert r.text.split("\n") == ["a.txt:1:aaaa", TIMED_OUT]


def test_every_walk_says_when_it_ran_out_of_time(callgate_session):  # §1.6
    import callgate_code

    files = {f"d{i}/f{i}.py": f"def f{i}(): ...\n" for i in range(5)}
    s = callgate_session(plugins=[callgate_search, callgate_code], files=files,
                         config={"search": {"grep_engine": "python", "timeout_s": 1e-9}})
    line = "... (timed out after 1e-09 s; results incomplete; narrow the path or pattern)"
    for name, args in (("glob", {"pattern": "**/*.py"}), ("ls", {"recursive": True}),
                       ("grep", {"pattern": "def"}),
                       ("code_index", {"action": "outline"})):
        r = s.call(name, args)
        assert not r.is_error, r.text
        assert r.text.rstrip("\n").split("\n")[-1] == line, (name, r.text)
