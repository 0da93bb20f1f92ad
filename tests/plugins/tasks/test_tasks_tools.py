"""task, parallel_tasks and read_subagent_result through the full pipeline
(goals-and-workflow.md §3; statements 24-29)."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import anyio
import callgate_providers as providers
import pytest
from callgate_tasks import SUBAGENTS, SubagentError, SubagentOutcome

from .conftest import ScriptedRunner, completed, refs

REF = re.compile(r"sa_[0-9a-f]{16}")


def _record(s, ref: str) -> dict:
    """The record the session store holds (committed), not the book's memory."""
    s.session.flush()
    return s.session.store.state(s.session.id)[("subagents", ref)]


def read_all(s, ref: str, limit: int | None = None) -> tuple[list[str], str]:
    """Page through ``ref``; returns the page texts and the reassembled answer."""
    pages, parts, offset = [], [], 0
    while True:
        args = {"ref": ref, "offset_bytes": offset}
        if limit is not None:
            args["limit_bytes"] = limit
        result = s.call("read_subagent_result", args)
        assert not result.is_error, result.text
        pages.append(result.text)
        head, rest = result.text.split("\n", 1)
        start, end, total = map(int, re.search(r"bytes (\d+)-(\d+) of (\d+)\):$", head).groups())
        assert start == offset
        if end < total:
            body, tail = rest.rsplit("\n\nMore remains.", 1)
            assert f'ref="{ref}" and offset_bytes={end}.' in tail
        else:
            body, tail = rest.rsplit("\n\nEnd of subagent result.", 1)
            assert tail == ""
        assert len(body.encode()) == end - start
        parts.append(body)
        if end == total:
            return pages, "".join(parts)
        offset = end


def test_without_a_runner_the_task_tools_do_not_exist(tasks) -> None:
    """24. No runner hook → unavailable in the session and, with no plugin implementing the
    hook, off providers.surface(host) too (listed in host.unhooked()); a direct call → unavailable
    naming the missing hook, as through the proxy (issue 36.6 overrides the spec's
    unknown_tool: the host knows the tool, so the model is not sent hunting for a spelling)."""
    s = tasks(None)
    for name in ("task", "parallel_tasks", "read_subagent_result"):
        assert name not in s.session.available_tools()
        assert name not in s.session.tool_names()
        assert name not in [t["name"] for t in providers.surface(s.host)]
        assert s.host.unhooked()[name] == ("callgate_subagent_runner",)
        result = s.call(name, {"ref": "sa_" + "0" * 16})
        assert result.error.kind == "unavailable", result.text
        assert "callgate_subagent_runner hook" in result.text
    with_runner = tasks(ScriptedRunner())
    assert {"task", "parallel_tasks", "read_subagent_result"} <= set(
        with_runner.session.tool_names())


def test_a_long_answer_is_previewed_within_budget_then_paged(tasks) -> None:
    """25. max_chars 16384, a 30,000-byte answer → task output ≤ 15872 chars with the ref and
    the read_subagent_result pointer; at 32768 the pages are 0-12288 … End of result."""
    answer = "".join(f"line {i:05d} of the report\n" for i in range(1200))[:30000]
    assert len(answer.encode()) == 30000
    s = tasks(ScriptedRunner(lambda r: completed(answer)), max_chars=16384)
    result = s.call("task", {"description": "research", "prompt": "write the report"})
    assert not result.is_error and "truncated" not in result.meta
    assert len(result.text) <= 15872
    ref = REF.search(result.text).group(0)
    assert result.text.startswith(f"Subagent reference: {ref}\n"
                                  "Subagent outcome: status=completed retryable=false\n\n"
                                  "Final answer:\n" + answer[:1000])
    assert f'read_subagent_result(ref="{ref}")' in result.text
    assert result.text.endswith(answer[-1000:])
    assert _record(s, ref)["answer"] == answer

    wide = tasks(ScriptedRunner(lambda r: completed(answer)), max_chars=32768,
                 session_dir=Path(s.session.directory).parent / "wide")
    ref = refs(wide.call("task", {"description": "research", "prompt": "again"}))[0]
    pages, whole = read_all(wide, ref)
    assert pages[0].startswith(f"Subagent result {ref} (status=completed, bytes 0-12288 of "
                               "30000):\n")
    assert pages[0].endswith(f'Call read_subagent_result with ref="{ref}" and '
                             "offset_bytes=12288.")
    assert pages[-1].endswith("End of subagent result.") and len(pages) == 3
    assert whole == answer


def test_pages_never_exceed_the_output_budget(tasks) -> None:
    s = tasks(ScriptedRunner(lambda r: completed("z" * 20000)), max_chars=4000)
    ref = refs(s.call("task", {"description": "d", "prompt": "p"}))[0]
    result = s.call("read_subagent_result", {"ref": ref, "limit_bytes": 24576})
    assert "bytes 0-3288 of 20000" in result.text and len(result.text) <= 4000 - 512


def test_parallel_previews_share_one_budget(tasks) -> None:
    """26. 8 children × 20,000 chars at max_chars 16384 → ≤ 15872 chars, 8 refs, 8 markers."""
    s = tasks(ScriptedRunner(lambda r: completed(r.prompt * 20000)), max_chars=16384)
    result = s.call("parallel_tasks", {"tasks": [
        {"description": f"child {i}", "prompt": chr(ord("a") + i)} for i in range(8)]})
    assert not result.is_error, result.text[:500]
    assert len(result.text) <= 15872
    found = REF.findall(result.text)
    assert list(dict.fromkeys(found)) == refs(result) and len(set(found)) == 8
    assert result.text.count("[preview truncated; read the full result with "
                             "read_subagent_result(ref=") == 8
    for i in range(8):
        assert f"[{i + 1}/8] child {i}\nSubagent reference: " in result.text
    positions = [result.text.index(f"[{i + 1}/8]") for i in range(8)]
    assert positions == sorted(positions)


def test_a_short_answer_stays_whole_beside_a_huge_one(tasks) -> None:
    """26. Answers of 100 and 40,000 bytes → the 100-byte one whole; the huge one takes the
    leftover (max-min fairness, not equal slices)."""
    answers = {"small": "s" * 99 + "!", "huge": "H" * 40000}
    s = tasks(ScriptedRunner(lambda r: completed(answers[r.prompt])), max_chars=16384)
    result = s.call("parallel_tasks", {"tasks": [{"description": "huge", "prompt": "huge"},
                                                 {"description": "small", "prompt": "small"}]})
    assert answers["small"] in result.text
    assert len(result.text) <= 15872
    assert result.text.count("H") > 15872 - 100 - 600  # everything else went to the huge one


def previews(text: str) -> list[str]:
    """Each child's preview, in order (the text after its `... preview:` line)."""
    blocks = re.split(r"\n\n(?=\[\d+/\d+\] )", text)
    return [b.split(" preview:\n", 1)[1] for b in blocks]


def test_fair_preview_one_huge_child_and_several_small(tasks) -> None:
    """The issue's case: small answers whole, the leftover shared by the larger ones."""
    sizes = {"big": 50000, "a": 300, "b": 1200, "c": 2500, "d": 6000}
    s = tasks(ScriptedRunner(lambda r: completed(r.prompt[0] * sizes[r.prompt])),
              max_chars=16384)
    result = s.call("parallel_tasks", {"tasks": [{"description": k, "prompt": k}
                                                 for k in sizes]})
    text = result.text
    assert len(text) <= 15872 and "truncated" not in result.meta
    shown = dict(zip(sizes, previews(text), strict=True))
    for k in ("a", "b", "c"):
        assert shown[k] == k * sizes[k]  # below the fair share: whole
    for k in ("big", "d"):
        assert "[preview truncated; read the full result with read_subagent_result" in shown[k]
    assert abs(len(shown["big"]) - len(shown["d"])) <= 1  # equal shares of the leftover
    assert len(shown["big"]) > (15872 - 600) // 5  # more than an equal slice
    assert len(text) > 15872 - 10  # nothing wasted


def test_runner_errors_map_to_outcomes(tasks) -> None:
    """27. TimeoutError → cancelled/false; status_code 503 → provider_http_503/true;
    ValueError → subagent_error/false; ConnectionResetError → provider_connection/true."""

    class Http(Exception):
        def __init__(self, code: int, on_response: bool = False) -> None:
            super().__init__(f"HTTP {code}")
            if on_response:
                self.response = type("R", (), {"status_code": code})()
            else:
                self.status_code = code

    errors = {
        "timeout": (TimeoutError(), "cancelled", "cancelled", False),
        "503": (Http(503), "failed", "provider_http_503", True),
        "429": (Http(429, on_response=True), "failed", "provider_http_429", True),
        "404": (Http(404), "failed", "provider_http_404", False),
        "value": (ValueError("bad"), "failed", "subagent_error", False),
        "reset": (ConnectionResetError(), "failed", "provider_connection", True),
        "named": (SubagentError("quota_exhausted", retryable=True), "failed",
                  "quota_exhausted", True),
    }

    def respond(request):
        raise errors[request.prompt][0]

    s = tasks(ScriptedRunner(respond))
    for prompt, (_exc, status, code, retryable) in errors.items():
        result = s.call("task", {"description": prompt, "prompt": prompt})
        assert result.is_error
        assert result.error.kind == ("cancelled" if status == "cancelled" else "tool_error")
        flag = "true" if retryable else "false"
        assert result.text.splitlines()[1] == (f"Subagent outcome: status={status} "
                                               f"retryable={flag} error_code={code}")
        ref = refs(result)[0]
        record = _record(s, ref)
        assert (record["status"], record["error_code"], record["retryable"]) == (
            status, code, retryable)
        assert record["finished_at"].endswith("Z") and record["answer"] is None


def test_returned_outcomes_are_used_as_given(tasks) -> None:
    outcomes = {
        "partial": SubagentOutcome(status="partial", answer="half done", state={"step": 3}),
        "failed": SubagentOutcome(status="failed", answer="got this far",
                                  error_code="tool_loop"),
        "text": "a plain string answer",
        "junk": 42,
    }
    s = tasks(ScriptedRunner(lambda r: outcomes[r.prompt]))
    partial = s.call("task", {"description": "p", "prompt": "partial"})
    assert not partial.is_error
    assert "status=partial retryable=true\n\nLast visible answer:\nhalf done" in partial.text
    assert _record(s, refs(partial)[0])["state"] == {"step": 3}
    failed = s.call("task", {"description": "f", "prompt": "failed"})
    assert failed.is_error and failed.error.signature == "tool_loop"
    assert "retryable=false error_code=tool_loop\n\nLast visible answer:\ngot this far" \
        in failed.text
    text = s.call("task", {"description": "t", "prompt": "text"})
    assert text.text.endswith("Final answer:\na plain string answer")
    junk = s.call("task", {"description": "j", "prompt": "junk"})
    assert "status=failed retryable=false error_code=subagent_error" in junk.text


def test_continue_from_reuses_the_ref_with_the_previous_record(tasks, tmp_path: Path) -> None:
    """28. continue_from a failed retryable ref → the runner gets the continuation, same ref,
    attempts 2; a completed ref → `already completed`; a foreign ref → `does not belong`."""
    calls = []

    def respond(request):
        calls.append(request)
        if request.continuation is None:
            return SubagentOutcome(status="failed", answer="step 1 done",
                                   error_code="provider_http_503", retryable=True,
                                   state={"resume_at": 2})
        return completed(f"finished from {request.continuation.state['resume_at']}")

    s = tasks(ScriptedRunner(respond))
    first = s.call("task", {"description": "build", "prompt": "go"})
    ref = refs(first)[0]
    again = s.call("task", {"description": "build (retry)", "prompt": "continue",
                            "continue_from": ref})
    assert not again.is_error, again.text
    assert again.text.startswith(f"Subagent reference: {ref}\n")
    assert again.text.endswith("Final answer:\nfinished from 2")
    continuation = calls[1].continuation
    assert (continuation.ref, continuation.answer, continuation.status) == (
        ref, "step 1 done", "failed")
    record = _record(s, ref)
    assert record["attempts"] == 2 and record["status"] == "completed"
    assert record["description"] == "build (retry)"
    done = s.call("task", {"description": "x", "prompt": "x", "continue_from": ref})
    assert done.error.signature == "SUBAGENT_ALREADY_COMPLETED"
    assert f"{ref} already completed; start a new task" in done.text

    other = tasks(ScriptedRunner(respond), session_dir=tmp_path / "other")
    foreign = refs(other.call("task", {"description": "o", "prompt": "o"}))[0]
    for name, args in (("task", {"description": "x", "prompt": "x", "continue_from": foreign}),
                       ("read_subagent_result", {"ref": foreign})):
        result = s.call(name, args)
        assert result.error.kind == "not_found" and result.error.signature == \
            "SUBAGENT_NOT_FOUND"
        assert f"{foreign} does not belong to this conversation" in result.text
    assert len(calls) == 3


def test_a_non_retryable_failure_cannot_be_continued(tasks) -> None:
    s = tasks(ScriptedRunner(lambda r: (_ for _ in ()).throw(ValueError("boom"))))
    ref = refs(s.call("task", {"description": "d", "prompt": "p"}))[0]
    result = s.call("task", {"description": "d", "prompt": "p", "continue_from": ref})
    assert f"{ref} is not retryable (status=failed error_code=subagent_error)" in result.text
    no_answer = s.call("read_subagent_result", {"ref": ref})
    assert f"{ref} has no answer to read (status=failed)" in no_answer.text


def test_a_record_from_another_workspace_does_not_belong(tasks, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    s = tasks(ScriptedRunner(), session_dir=shared)
    ref = refs(s.call("task", {"description": "d", "prompt": "p"}))[0]
    elsewhere = tasks(ScriptedRunner(), session_dir=shared, host=s.host)
    assert elsewhere.workspace != s.workspace
    result = elsewhere.call("read_subagent_result", {"ref": ref})
    assert "does not belong to this conversation" in result.text
    same = tasks(ScriptedRunner(), session_dir=shared, host=s.host, workspace=s.workspace)
    assert "answer to p" in same.call("read_subagent_result", {"ref": ref}).text


def test_offsets_inside_a_character_move_back_and_pages_stay_utf8(tasks) -> None:
    """29. 10,000 × é, offset_bytes 1 → `bytes 0-`; every page is valid UTF-8."""
    answer = "é" * 10000
    s = tasks(ScriptedRunner(lambda r: completed(answer)))
    ref = refs(s.call("task", {"description": "d", "prompt": "p"}))[0]
    result = s.call("read_subagent_result", {"ref": ref, "offset_bytes": 1, "limit_bytes": 999})
    assert result.text.startswith(f"Subagent result {ref} (status=completed, bytes 0-998 of "
                                  "20000):\n" + "é" * 499 + "\n\nMore remains.")
    pages, whole = read_all(s, ref, limit=1001)
    assert whole == answer and "\ufffd" not in "".join(pages)
    end = s.call("read_subagent_result", {"ref": ref, "offset_bytes": 20000})
    assert end.text.endswith("bytes 20000-20000 of 20000):\n\n\nEnd of subagent result.")
    past = s.call("read_subagent_result", {"ref": ref, "offset_bytes": 20001})
    assert past.error.signature == "SUBAGENT_OFFSET_OUT_OF_RANGE"
    tiny = s.call("read_subagent_result", {"ref": ref, "limit_bytes": 1})
    assert tiny.error.signature == "SUBAGENT_LIMIT_TOO_SMALL"
    for args in ({"ref": "sa_123"}, {"ref": ref, "limit_bytes": 24577},
                 {"ref": ref, "offset_bytes": -1}, {"ref": ref, "extra": 1}):
        assert s.call("read_subagent_result", args).error.kind == "invalid_arguments"


def test_one_failing_child_never_stops_its_siblings(tasks) -> None:
    """29. One of three children failing → the others complete."""

    async def respond(request):
        if request.prompt == "bad":
            raise RuntimeError("crashed")
        await anyio.sleep(0.05)
        return completed(f"done {request.prompt}")

    s = tasks(ScriptedRunner(respond))
    result = s.call("parallel_tasks", {"tasks": [{"description": p, "prompt": p}
                                                 for p in ("one", "bad", "two")]})
    assert not result.is_error
    statuses = [c["status"] for c in result.meta["subagents"]]
    assert statuses == ["completed", "failed", "completed"]
    assert "done one" in result.text and "done two" in result.text
    assert "[2/3] bad\n" in result.text and "error_code=subagent_error" in result.text
    every = s.call("parallel_tasks", {"tasks": [{"description": "b", "prompt": "bad"}] * 2})
    assert every.is_error and every.error.signature == "SUBAGENTS_ALL_FAILED"


def test_cancelling_the_call_cancels_every_child(tasks) -> None:
    """29. Cancelling → all children recorded cancelled."""
    started = threading.Event()

    async def respond(request):
        started.set()
        await anyio.sleep_forever()

    s = tasks(ScriptedRunner(respond))
    timer = threading.Thread(target=lambda: (started.wait(10), time.sleep(0.1),
                                             s.session.cancel()))
    timer.start()
    begin = time.monotonic()
    result = s.call("parallel_tasks", {"tasks": [{"description": str(i), "prompt": str(i)}
                                                 for i in range(6)]})
    timer.join()
    assert time.monotonic() - begin < 10
    assert result.is_error and result.error.kind == "cancelled"
    assert [c["status"] for c in result.meta["subagents"]] == ["cancelled"] * 6
    for ref in refs(result):
        record = _record(s, ref)
        assert (record["status"], record["error_code"], record["retryable"]) == (
            "cancelled", "cancelled", False)


def test_children_run_concurrently_up_to_max_parallel(tasks) -> None:
    state = {"now": 0, "peak": 0}

    async def respond(request):
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await anyio.sleep(0.05)
        state["now"] -= 1
        return completed("ok")

    s = tasks(ScriptedRunner(respond), config={"tasks": {"max_parallel": 2}})
    s.call("parallel_tasks", {"tasks": [{"description": "d", "prompt": "p"}] * 5})
    assert state["peak"] == 2
    default = tasks(ScriptedRunner(respond))
    default.call("parallel_tasks", {"tasks": [{"description": "d", "prompt": "p"}] * 8})
    assert state["peak"] == 4


def test_children_get_their_own_session_with_empty_observations(tasks) -> None:
    seen = {}

    def respond(request):
        child = request.session
        seen.update(observations=child.observations(), origin=child.turn_origin,
                    parent=child.parent, workspace=request.workspace, ref=request.ref,
                    description=request.description, closed=child.closed, child=child)
        return completed("ok")

    s = tasks(ScriptedRunner(respond), files={"a.txt": "hello"})
    s.session.files.read_text("a.txt", observe=True)
    assert s.session.observations()
    result = s.call("task", {"description": "look", "prompt": "p"})
    assert seen["observations"] == {} and seen["origin"] == "none"
    assert seen["parent"] is s.session and seen["workspace"] == s.session.workspace.root
    assert seen["ref"] == refs(result)[0] and seen["description"] == "look"
    assert seen["closed"] is False and seen["child"].closed is True


def test_records_are_written_running_before_the_child_runs(tasks) -> None:
    seen = {}

    def respond(request):
        seen.update(_record(s, request.ref))
        try:
            s.session.extension(SUBAGENTS).readable(request.ref)
        except Exception as exc:
            seen["read"] = str(exc)
        return completed("ok")

    s = tasks(ScriptedRunner(respond))
    s.call("task", {"description": "d", "prompt": "p"})
    assert seen["status"] == "running" and seen["attempts"] == 1 and seen["version"] == 1
    assert set(seen) >= {"ref", "description", "status", "retryable", "error_code", "answer",
                         "state", "attempts", "workspace", "created_at", "finished_at"}
    assert "is still running" in seen["read"]


def test_a_running_record_left_by_a_stopped_host_reads_as_interrupted(tasks, tmp_path) -> None:
    s = tasks(ScriptedRunner())
    ref = refs(s.call("task", {"description": "d", "prompt": "p"}))[0]
    record = _record(s, ref)
    # what a host killed while the child ran leaves in the store
    s.session.storage.put("subagents", ref, {**record, "status": "running",
                                             "finished_at": None,
                                             "answer": "partial text so far"})
    s.close()
    again = tasks(ScriptedRunner(), host=s.host, workspace=s.workspace)
    assert again.session.id == s.session.id
    page = again.call("read_subagent_result", {"ref": ref})
    assert "(status=cancelled, bytes 0-19 of 19)" in page.text
    rewritten = _record(again, ref)
    assert (rewritten["status"], rewritten["error_code"], rewritten["retryable"]) == (
        "cancelled", "interrupted", True)
    resumed = again.call("task", {"description": "d", "prompt": "p", "continue_from": ref})
    assert not resumed.is_error and _record(again, ref)["attempts"] == 2


def test_an_old_session_directorys_record_is_imported_once(tasks, tmp_path) -> None:
    first = tasks(ScriptedRunner())
    ref = refs(first.call("task", {"description": "d", "prompt": "hello"}))[0]
    record = _record(first, ref)
    first.close()
    old = tmp_path / "old-session"
    (old / "subagents").mkdir(parents=True)
    (old / "subagents" / f"{ref}.json").write_text(json.dumps(record))
    before = (old / "subagents" / f"{ref}.json").read_bytes()
    s = tasks(ScriptedRunner(), host=first.host, workspace=first.workspace, session_dir=old)
    assert s.session.id != first.session.id
    assert "answer to hello" in s.call("read_subagent_result", {"ref": ref}).text
    assert _record(s, ref) == record
    assert (old / "subagents" / f"{ref}.json").read_bytes() == before


def test_records_stay_in_memory_without_a_session_directory(callgate_session) -> None:
    import callgate_tasks

    from .conftest import RunnerIntegration

    s = callgate_session(plugins=[callgate_tasks, RunnerIntegration(ScriptedRunner())])
    assert s.session.directory is None
    ref = refs(s.call("task", {"description": "d", "prompt": "hello"}))[0]
    assert "answer to hello" in s.call("read_subagent_result", {"ref": ref}).text


@pytest.mark.parametrize("args", [
    {"description": "", "prompt": "p"},
    {"description": "d" * 121, "prompt": "p"},
    {"description": "d", "prompt": ""},
    {"description": "d", "prompt": "p", "continue_from": "sa_XYZ"},
    {"description": "d", "prompt": "p", "fork_from": "x"},
])
def test_task_argument_limits(tasks, args) -> None:
    runner = ScriptedRunner()
    s = tasks(runner)
    assert s.call("task", args).error.kind == "invalid_arguments"
    assert s.call("parallel_tasks", {"tasks": [{"description": "d", "prompt": "p"}] * 9}) \
        .error.kind == "invalid_arguments"
    assert s.call("parallel_tasks", {"tasks": []}).error.kind == "invalid_arguments"
    assert runner.requests == []


def test_receipts_are_cut_when_they_would_take_over_half_the_budget(tasks) -> None:
    """Receipts over B/2 are each cut to (B/2)/n characters; the whole stays within B."""
    s = tasks(ScriptedRunner(lambda r: completed("x" * 5000)), max_chars=1000)
    result = s.call("parallel_tasks", {"tasks": [
        {"description": "a long description of the child's job " * 3, "prompt": str(i)}
        for i in range(8)]})
    assert not result.is_error
    assert len(result.text) <= 1000 - 512
    blocks = re.split(r"\n\n(?=\[\d+/\d+\] )", result.text)
    assert len(blocks) == 8 and all(b.startswith(f"[{i + 1}/8] ") for i, b in enumerate(blocks))
