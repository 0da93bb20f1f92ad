"""The ask tool through the full pipeline: an integrator's answers, no one to ask,
dismissal, a hook that never answers, bad questions refused unexecuted, and
``callgate replay --answers FILE``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import callgate_ask
import pytest
from callgate import hookimpl

DB = {
    "header": "Database",
    "question": "Which database should the service use?",
    "options": [
        {"label": "Postgres", "description": "relational, already deployed"},
        {"label": "SQLite", "description": "a file, no server"},
    ],
}
FEATURES = {
    "header": "Features",
    "question": "Which features ship first?",
    "multiSelect": True,
    "options": [
        {"label": "Auth", "description": "log in"},
        {"label": "Search", "description": "full text"},
        {"label": "Export", "description": "CSV"},
    ],
}


class User:
    """An integrator whose user answers ``reply`` (or awaits ``delay`` first)."""

    def __init__(self, reply: Any, delay: float = 0.0) -> None:
        self.reply, self.delay = reply, delay
        self.asked: list[list[dict[str, Any]]] = []

    @hookimpl
    def callgate_ask_user(self, session: Any, questions: list[dict[str, Any]]) -> Any:
        self.asked.append(questions)
        if not self.delay:
            return self.reply

        async def later() -> Any:
            await anyio.sleep(self.delay)
            return self.reply

        return later()


def open_ask(callgate_session: Any, user: Any = None, config: dict | None = None) -> Any:
    plugins: list[Any] = [callgate_ask] + ([user] if user is not None else [])
    return callgate_session(plugins=plugins, config=config or {})


def test_the_integrators_answers_come_back_one_line_per_question(callgate_session) -> None:
    user = User({"q1": ["Postgres"], "q2": ["Auth", "Search"]})
    s = open_ask(callgate_session, user)
    r = s.call("ask", {"questions": [DB, FEATURES]})
    assert not r.is_error
    assert r.text == "The user answered:\n- Database: Postgres\n- Features: Auth, Search"
    assert r.meta["status"] == "answered"
    [asked] = user.asked
    assert [q["id"] for q in asked] == ["q1", "q2"]
    assert asked[0]["multiSelect"] is False and asked[1]["multiSelect"] is True
    assert asked[0]["options"][1] == {"label": "SQLite", "description": "a file, no server"}


def test_async_answers_free_text_and_a_single_select_keeps_one(callgate_session) -> None:
    user = User({"q1": ["MySQL, please", "SQLite"], "q2": "Export"}, delay=0.01)
    s = open_ask(callgate_session, user)
    r = s.call("ask", {"questions": [DB, FEATURES]})
    assert r.text == ("The user answered:\n- Database: (typed) MySQL, please\n- Features: Export")


def test_an_unanswered_question_says_assume(callgate_session) -> None:
    s = open_ask(callgate_session, User({"q2": ["Auth"]}))
    r = s.call("ask", {"questions": [DB, FEATURES]})
    assert "- Database: (not answered: assume" in r.text and "- Features: Auth" in r.text


def test_with_no_one_to_ask_the_model_is_told_to_assume(callgate_session) -> None:
    s = open_ask(callgate_session)
    r = s.call("ask", {"questions": [DB]})
    assert not r.is_error and r.meta["status"] == "no_one_to_ask"
    assert r.text.startswith("No one is available to answer")
    assert "say in your reply which assumption you made" in r.text


def test_an_integrator_that_declines_to_answer_is_no_one(callgate_session) -> None:
    s = open_ask(callgate_session, User(None))
    assert s.call("ask", {"questions": [DB]}).meta["status"] == "no_one_to_ask"


def test_dismissing_every_question_says_stop_and_wait(callgate_session) -> None:
    s = open_ask(callgate_session, User({"q1": None, "q2": None}))
    r = s.call("ask", {"questions": [DB, FEATURES]})
    assert r.meta["status"] == "dismissed" and "Stop and wait" in r.text


def test_a_user_who_never_answers_does_not_hang_the_call(callgate_session) -> None:
    s = open_ask(
        callgate_session,
        User({"q1": ["Postgres"]}, delay=3600),
        config={"ask": {"timeout_seconds": 1}},
    )
    r = s.call("ask", {"questions": [DB]})
    assert r.meta["status"] == "timed_out"
    assert "did not answer within 1 seconds" in r.text


@pytest.mark.parametrize(
    "questions, where",
    [
        ([], "/questions"),
        ([DB] * 5, "/questions"),
        ([{**DB, "header": "A header that is too long"}], "/questions/0/header"),
        ([{**DB, "options": DB["options"][:1]}], "/questions/0/options"),
        ([{**DB, "options": DB["options"] * 3}], "/questions/0/options"),
        ([{**DB, "options": [DB["options"][0], DB["options"][0]]}], "/questions/0/options/1/label"),
        ([DB, DB], "/questions/1/question"),
        ([{**DB, "question": "   "}], "/questions/0/question"),
        ([{k: v for k, v in DB.items() if k != "header"}], "/questions/0"),
    ],
)
def test_bad_questions_are_refused_before_anyone_is_asked(
    callgate_session, questions, where
) -> None:
    user = User({"q1": ["Postgres"]})
    s = open_ask(callgate_session, user)
    r = s.expect_error("ask", {"questions": questions}, kind="invalid_arguments")
    assert where in r.text
    assert user.asked == []


def test_ask_is_read_only_and_runs_in_plan_mode(callgate_session) -> None:
    s = open_ask(callgate_session, User({"q1": ["SQLite"]}))
    s.session.set_mode("plan")
    assert s.call("ask", {"questions": [DB]}).text.endswith("Database: SQLite")


# --- callgate replay --answers ------------------------------------------------------------


def _replay(tmp_path: Path, transcript: list[dict], *extra: str) -> subprocess.CompletedProcess:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in transcript))
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "ask"}
    return subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", str(path), "--workspace", str(ws), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_replay_answers_from_a_file(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps(
            {
                "answers": {
                    "Which database should the service use?": "SQLite",
                    "Features": ["Auth", "Export"],
                }
            }
        )
    )
    other = {**DB, "header": "Deploy", "question": "Where does it run?"}
    proc = _replay(
        tmp_path,
        [
            {"name": "ask", "arguments": {"questions": [DB, FEATURES]}},
            {"name": "ask", "arguments": {"questions": [other]}},
        ],
        "--answers",
        str(answers),
    )
    assert proc.returncode == 0, proc.stderr
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert first["content"] == ("The user answered:\n- Database: SQLite\n- Features: Auth, Export")
    assert second["content"].startswith("No one is available to answer")


def test_replay_without_answers_has_no_one_to_ask(tmp_path: Path) -> None:
    proc = _replay(tmp_path, [{"name": "ask", "arguments": {"questions": [DB]}}])
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    assert json.loads(line)["content"].startswith("No one is available")


@pytest.mark.parametrize(
    "content, says",
    [
        ("not json", "is not JSON"),
        (json.dumps({"Database": "SQLite"}), '{"answers"'),
        (json.dumps({"answers": {"Database": 3}}), "must be a string, a list of strings or null"),
    ],
)
def test_replay_refuses_a_bad_answers_file(tmp_path: Path, content: str, says: str) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(content)
    proc = _replay(
        tmp_path, [{"name": "ask", "arguments": {"questions": [DB]}}], "--answers", str(answers)
    )
    assert proc.returncode == 2 and says in proc.stderr and proc.stdout == ""
    missing = _replay(tmp_path, [], "--answers", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "cannot open answers file" in missing.stderr


def test_a_strict_read_only_child_never_asks(callgate_session) -> None:
    from callgate import ChildProfile

    user = User({"q1": ["Postgres"]})
    s = open_ask(callgate_session, user)
    strict = s.child(ChildProfile(name="explore", read_only=True))
    r = strict.call("ask", {"questions": [DB]})
    assert r.is_error and r.meta.get("executed") is False, r.text
    assert user.asked == []
    # a child that is not strict may still ask the same user
    plain = s.child(ChildProfile(name="helper"))
    assert plain.call("ask", {"questions": [DB]}).text.endswith("Database: Postgres")


class BlockingUser:
    """A frontend whose sync hook blocks (a terminal prompt nobody answers)."""

    def __init__(self) -> None:
        import threading

        self.release = threading.Event()

    @hookimpl
    def callgate_ask_user(self, session: Any, questions: list[dict[str, Any]]) -> Any:
        self.release.wait(30)
        return {"q1": ["Postgres"]}


def test_a_blocking_sync_hook_times_out_too(callgate_session) -> None:
    user = BlockingUser()
    s = open_ask(callgate_session, user, config={"ask": {"timeout_seconds": 1}})
    try:
        assert s.call("ask", {"questions": [DB]}).meta["status"] == "timed_out"
    finally:
        user.release.set()


class BrokenUser:
    @hookimpl
    def callgate_ask_user(self, session: Any, questions: list[dict[str, Any]]) -> Any:
        raise RuntimeError("the frontend broke")


def test_a_failing_hook_leaves_no_one_to_ask(callgate_session) -> None:
    s = open_ask(callgate_session, BrokenUser())
    assert s.call("ask", {"questions": [DB]}).meta["status"] == "no_one_to_ask"
