"""Turn origins and automatic rounds: the hook path, the direct path, and replay
(goals-and-workflow.md §0; statement 30)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from callgate.store import open_store
from callgate_goals import GOALS

from .conftest import body, create, goal, update


def test_an_automatic_turn_starts_a_round_through_the_hook(goals) -> None:
    """30. begin_turn("automatic") with an active armed goal → round 1; complete works."""
    s = goals()
    g = create(s)
    s.sync.begin_turn("automatic")
    r = s.session.extension(GOALS).round
    assert r is not None and r.number == 1 and r.goal_id == g["id"]
    got = goal(s.call("get_goal", {}))
    assert got["rounds_started"] == 1 and got["revision"] == 1
    assert goal(update(s, got, "complete"))["phase"] == "complete"
    s.sync.begin_turn("automatic")
    assert s.session.extension(GOALS).round is None


def test_an_automatic_turn_without_a_due_round_may_only_read(goals) -> None:
    """30. No goal → the automatic turn is unbound: update_goal refused, get_goal works."""
    s = goals(origin=None)
    s.sync.begin_turn("automatic")
    assert s.session.extension(GOALS).round is None
    result = s.call("update_goal", {"goal_id": "a" * 32, "revision": 1, "action": "complete"})
    assert result.error.signature == "GOAL_USER_AUTHORITY_REQUIRED"
    assert body(s.call("get_goal", {})) == {"goal": None}


def test_a_human_turn_unbinds_the_round(goals) -> None:
    s = goals()
    create(s)
    r = s.session.extension(GOALS).start_round()
    assert s.session.turn_origin == "automatic" and s.session.extension(GOALS).round == r
    s.sync.begin_turn("human")
    assert s.session.extension(GOALS).round is None and s.session.turn_origin == "human"
    g = s.session.extension(GOALS).current()
    assert goal(update(s, g, "pause"))["phase"] == "paused"


def test_start_round_declares_the_turn_itself(goals) -> None:
    s = goals(origin=None)
    assert s.session.extension(GOALS).start_round() is None
    assert s.session.turn_origin == "automatic"


def test_the_integrator_loop_runs_rounds_until_the_goal_stops(goals) -> None:
    s = goals()
    create(s, max_goal_rounds=5)
    numbers = []
    while s.session.extension(GOALS).should_continue():
        r = s.session.extension(GOALS).start_round()
        numbers.append(r.number)
        if r.number == 3:
            g = s.session.extension(GOALS).current()
            assert goal(update(s, g, "complete"))["phase"] == "complete"
    assert numbers == [1, 2, 3]


def test_a_child_session_never_inherits_the_origin_or_goal(goals) -> None:
    s = goals()
    create(s)
    child = s.child()
    assert child.session.turn_origin == "none"
    assert child.session.extension(GOALS).current() is None
    refused = child.call("create_goal", {"objective": "x"})
    assert refused.error.signature == "GOAL_USER_AUTHORITY_REQUIRED"


# --- callgate replay (host.md §9): human and automatic lines --------------------------------

GOAL_ID = "0123456789abcdef0123456789abcdef"


def _seed(directory: Path) -> None:
    """A goal left armed by an earlier host: replay restores it disarmed (cold-restore)."""
    directory.mkdir()
    snapshot = {"id": GOAL_ID, "revision": 1, "objective": "Ship v1", "phase": "active",
                "armed": True, "max_goal_rounds": None, "rounds_started": 0,
                "stop_reason": None, "blocked_reason": None,
                "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z"}
    (directory / "goals.json").write_text(json.dumps({"version": 1, "goal": snapshot}))


def _call(cid: str, name: str, arguments: dict, origin: str | None = None) -> str:
    line = {"id": cid, "name": name, "arguments": arguments}
    if origin:
        line["origin"] = origin
    return json.dumps(line)


def test_replay_demonstrates_the_lifecycle_and_authority(tmp_path: Path) -> None:
    """30 (and the issue's done-means): replay with human and automatic lines."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session_dir = tmp_path / "session"
    _seed(session_dir)
    update_args = {"goal_id": GOAL_ID, "action": "complete"}
    lines = [
        # an automatic turn while the restored goal is disarmed: unbound, read only
        _call("a1", "update_goal", {**update_args, "revision": 1}, "automatic"),
        _call("a2", "create_goal", {"objective": "sneaky"}, "automatic"),
        # the human resumes it (revision 2) ...
        _call("h1", "update_goal", {"goal_id": GOAL_ID, "revision": 1, "action": "resume"}),
        # ... and the next automatic turn is round 1, which may complete its own goal
        json.dumps({"origin": "automatic", "batch": [
            {"id": "r1", "name": "get_goal", "arguments": {}},
            {"id": "r2", "name": "update_goal", "arguments": {**update_args, "revision": 2,
                                                               "action": "pause"}},
            {"id": "r3", "name": "update_goal", "arguments": {**update_args, "revision": 2}},
        ]}),
        # nothing is due any more: the automatic turn is unbound again
        _call("u1", "update_goal", {**update_args, "revision": 3}, "automatic"),
        _call("u2", "get_goal", {}, "automatic"),
        # a human may start the next goal: the complete one is replaced
        _call("h2", "create_goal", {"objective": "Ship v2"}, "human"),
    ]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "goals"}
    proc = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", str(transcript), "--workspace",
         str(workspace), "--session-dir", str(session_dir), "--surface", "full"],
        capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = {o["id"]: o for o in map(json.loads, proc.stdout.splitlines())}
    assert list(out) == ["a1", "a2", "h1", "r1", "r2", "r3", "u1", "u2", "h2"]
    for cid in ("a1", "a2", "r2", "u1"):
        assert out[cid]["error"]["signature"] == "GOAL_USER_AUTHORITY_REQUIRED", out[cid]
    resumed = json.loads(out["h1"]["content"])["goal"]
    assert (resumed["revision"], resumed["armed"]) == (2, True)
    during = json.loads(out["r1"]["content"])["goal"]
    assert (during["rounds_started"], during["revision"]) == (1, 2)
    done = json.loads(out["r3"]["content"])
    assert done["goal"]["phase"] == "complete" and done["goal"]["revision"] == 3
    assert "no further automatic goal round" in done["instruction"]
    assert json.loads(out["u2"]["content"])["goal"]["phase"] == "complete"
    new = json.loads(out["h2"]["content"])["goal"]
    assert new["objective"] == "Ship v2" and new["id"] != GOAL_ID
    store = open_store()
    stored = store.session_for_directory(str(session_dir), str(workspace.resolve()))
    assert stored is not None
    assert store.state(stored.id)[("goals", "goal")]["goal"] == new
    store.close()
