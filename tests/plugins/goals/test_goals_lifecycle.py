"""create_goal / get_goal / update_goal through the full pipeline (goals-and-workflow.md §1).

Numbers in test docstrings are the spec's acceptance statements (§4).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from callgate_goals import GOALS

from .conftest import body, create, goal, state_of, stored, update


def _error(result, code: str, kind: str = "tool_error") -> str:
    assert result.is_error, result.text
    assert result.error.signature == f"GOAL_{code}"
    assert result.error.kind == kind
    assert result.text.startswith(f"{result.name} [GOAL_{code}]: "), result.text
    return result.text


def test_create_in_a_human_turn_starts_an_armed_unlimited_goal(goals) -> None:
    """1. Origin human → revision 1, active, armed, max_goal_rounds null."""
    s = goals()
    g = create(s, "  Ship v1  ")
    assert re.fullmatch(r"[0-9a-f]{32}", g["id"])
    assert g == {**g, "revision": 1, "objective": "Ship v1", "phase": "active", "armed": True,
                 "max_goal_rounds": None, "rounds_started": 0, "stop_reason": None,
                 "blocked_reason": None}
    assert list(g) == ["id", "revision", "objective", "phase", "armed", "max_goal_rounds",
                       "rounds_started", "stop_reason", "blocked_reason", "created_at",
                       "updated_at"]
    assert g["created_at"].endswith("Z") and g["created_at"] == g["updated_at"]
    assert s.session.extension(GOALS).current() == g
    assert goal(s.call("get_goal", {})) == g


def test_second_create_names_the_unfinished_goal(goals) -> None:
    """1. A second create → GOAL_ALREADY_EXISTS naming its id and phase; nothing changes."""
    s = goals()
    g = create(s)
    before = state_of(s)
    text = _error(s.call("create_goal", {"objective": "Other"}), "ALREADY_EXISTS",
                  "already_exists")
    assert g["id"] in text and "active" in text and "or complete it (update_goal)" in text
    assert s.session.extension(GOALS).current() == g
    assert state_of(s) == before


def test_paused_and_blocked_goals_also_block_create_but_a_complete_one_is_replaced(goals):
    s = goals()
    g = create(s)
    g = goal(update(s, g, "pause"))
    assert "paused" in _error(s.call("create_goal", {"objective": "x"}), "ALREADY_EXISTS",
                              "already_exists")
    g = goal(update(s, g, "resume"))
    g = goal(update(s, g, "blocked", blocked_reason="need a key"))
    text = _error(s.call("create_goal", {"objective": "x"}), "ALREADY_EXISTS", "already_exists")
    assert "blocked" in text and "resume it and complete it" in text  # issue 36.8
    assert update(s, g, "complete").error.signature == "GOAL_INVALID_TRANSITION"  # why
    g = goal(update(s, g, "resume"))
    goal(update(s, g, "complete"))
    new = create(s, "Next goal", max_goal_rounds=3)
    assert new["id"] != g["id"] and new["revision"] == 1 and new["max_goal_rounds"] == 3


@pytest.mark.parametrize("origin", [None, "automatic"])
def test_create_needs_a_direct_human_turn(goals, tmp_path: Path, origin) -> None:
    """2. Origin none or automatic → GOAL_USER_AUTHORITY_REQUIRED; no goal, none stored."""
    s = goals(origin=None)
    if origin == "automatic":
        s.sync.begin_turn("automatic")
    assert s.session.turn_origin == (origin or "none")
    text = _error(s.call("create_goal", {"objective": "Ship v1"}), "USER_AUTHORITY_REQUIRED")
    assert "needs a direct human turn; no goal state was changed" in text
    assert s.session.extension(GOALS).current() is None
    assert stored(s) is None
    assert body(s.call("get_goal", {})) == {"goal": None}


def test_stale_revision_changes_nothing(goals) -> None:
    """3. Stale revision on pause → GOAL_STALE_REVISION, `current revision is 1`; bytes same."""
    s = goals()
    g = create(s)
    before = state_of(s)
    result = s.call("update_goal", {"goal_id": g["id"], "revision": 3, "action": "pause"})
    text = _error(result, "STALE_REVISION", "stale_version")
    assert "revision 3 is stale; current revision is 1; call get_goal and retry" in text
    assert s.session.extension(GOALS).current() == g
    assert state_of(s) == before


def test_revision_sequence_edit_pause_resume_complete(goals) -> None:
    """4. edit → pause → resume → complete gives revisions 2, 3, 4, 5."""
    s = goals()
    g = create(s)
    g = goal(update(s, g, "edit", objective="Ship v1.1"))
    assert (g["revision"], g["objective"], g["phase"], g["armed"]) == (2, "Ship v1.1",
                                                                      "active", True)
    g = goal(update(s, g, "pause"))
    assert (g["revision"], g["phase"], g["armed"], g["stop_reason"]) == (3, "paused", False,
                                                                          "user-paused")
    g = goal(update(s, g, "resume"))
    assert (g["revision"], g["phase"], g["armed"], g["stop_reason"]) == (4, "active", True,
                                                                          None)
    result = update(s, g, "complete")
    g = goal(result)
    assert (g["revision"], g["phase"], g["armed"], g["stop_reason"]) == (5, "complete", False,
                                                                          "complete")
    assert "no further automatic goal round" in body(result)["instruction"]
    assert "Fields not applied" not in body(result)["instruction"]
    on_disk = stored(s)
    assert on_disk == {"version": 1, "goal": g}


def test_pause_ignores_fields_it_does_not_consume(goals) -> None:
    """5. pause with objective and max_goal_rounds:null → paused, objective unchanged."""
    s = goals()
    g = create(s, max_goal_rounds=5)
    out = body(update(s, g, "pause", objective="y", max_goal_rounds=None))
    assert out["goal"]["phase"] == "paused"
    assert out["goal"]["objective"] == "Ship v1" and out["goal"]["max_goal_rounds"] == 5
    assert out["instruction"] == (
        'Fields not applied: objective, max_goal_rounds. Action "pause" ignores these fields; '
        "the returned goal contains the effective state.")


def test_complete_with_an_empty_blocked_reason_reports_it_ignored(goals) -> None:
    """6. complete with blocked_reason "" → success; the instruction lists blocked_reason."""
    s = goals()
    g = create(s)
    out = body(update(s, g, "complete", blocked_reason="", objective=""))
    assert out["goal"]["phase"] == "complete" and out["goal"]["blocked_reason"] is None
    assert out["instruction"].startswith("Fields not applied: objective, blocked_reason. "
                                         'Action "complete" ignores these fields;')
    assert out["instruction"].endswith("no further automatic goal round will be admitted.")


def test_ignored_fields_of_edit_and_blocked(goals) -> None:
    s = goals()
    g = create(s)
    out = body(update(s, g, "edit", objective="New", blocked_reason="x"))
    assert out["goal"]["objective"] == "New" and out["goal"]["blocked_reason"] is None
    assert out["instruction"].startswith("Fields not applied: blocked_reason.")
    out = body(update(s, out["goal"], "blocked", blocked_reason=" need creds ",
                      objective="z", max_goal_rounds=9))
    g = out["goal"]
    assert (g["phase"], g["objective"], g["max_goal_rounds"]) == ("blocked", "New", None)
    assert g["blocked_reason"] == {"code": "model-blocked", "message": "need creds"}
    assert g["stop_reason"] == "model-blocked" and g["armed"] is False
    assert out["instruction"].startswith("Fields not applied: objective, max_goal_rounds.")
    assert "no further automatic goal round" in out["instruction"]
    g = goal(update(s, g, "resume"))
    assert g["blocked_reason"] is None and g["stop_reason"] is None and g["armed"]


def test_edit_field_rules(goals) -> None:
    """7. edit with neither field → GOAL_INVALID_EDIT; 0 → validation; limit below rounds."""
    s = goals()
    g = create(s)
    text = _error(update(s, g, "edit"), "INVALID_EDIT")
    assert "edit requires objective and/or max_goal_rounds" in text
    _error(update(s, g, "edit", objective=None), "INVALID_EDIT")
    _error(update(s, g, "edit", objective="   "), "INVALID_OBJECTIVE")
    zero = update(s, g, "edit", max_goal_rounds=0)
    assert zero.error.kind == "invalid_arguments" and "/max_goal_rounds" in zero.text
    for _ in range(3):
        assert s.session.extension(GOALS).start_round() is not None
    s.sync.begin_turn("human")
    g = s.session.extension(GOALS).current()
    assert g["rounds_started"] == 3 and g["max_goal_rounds"] is None
    before = state_of(s)
    text = _error(update(s, g, "edit", max_goal_rounds=2), "INVALID_MAX_ROUNDS")
    assert "3 rounds already started" in text
    assert state_of(s) == before
    g = goal(update(s, g, "edit", max_goal_rounds=3))
    assert g["max_goal_rounds"] == 3 and g["revision"] == 2
    g = goal(update(s, g, "edit", max_goal_rounds=None))
    assert g["max_goal_rounds"] is None and g["revision"] == 3


def test_retired_protocols_are_validation_errors_with_hints(goals) -> None:
    """8. A status field → `status protocol is retired`; action continue → `no continue
    action`. Both unexecuted validation errors."""
    s = goals()
    g = create(s)
    result = s.call("update_goal", {"goal_id": g["id"], "revision": 1, "status": "complete"})
    assert result.error.kind == "invalid_arguments"
    assert "the status protocol is retired; call get_goal, then pass goal_id, revision and " \
           "action" in result.text
    assert result.error.message == result.text
    assert result.text.rstrip().splitlines()[-1].startswith("signature: argument_validation:")
    result = update(s, g, "continue")
    assert result.error.kind == "invalid_arguments"
    assert "there is no continue action; leaving the goal unchanged continues it" in result.text
    assert s.session.extension(GOALS).current() == g


def test_retired_protocol_hint_reaches_a_proxied_call(goals) -> None:
    s = goals(lean=True)
    g = create_via_proxy(s)

    [result] = s.run(via_capability("update_goal", {"goal_id": g["id"], "revision": 1,
                                                    "status": "done"}))
    assert result.error.kind == "invalid_arguments"
    assert "status protocol is retired" in result.text
    assert "use_capability.arguments" in result.text


def create_via_proxy(s) -> dict:

    [result] = s.run(via_capability("create_goal", {"objective": "Ship v1"}))
    return goal(result)


def test_unknown_fields_and_bad_ids_are_refused_by_the_schemas(goals) -> None:
    s = goals()
    g = create(s)
    for args in ({"objective": "x", "extra": 1},):
        assert s.call("create_goal", args).error.kind == "invalid_arguments"
    assert s.call("get_goal", {"x": 1}).error.kind == "invalid_arguments"
    bad_id = s.call("update_goal", {"goal_id": "ABC", "revision": 1, "action": "pause"})
    assert bad_id.error.kind == "invalid_arguments"
    blank = s.call("create_goal", {"objective": "   "})
    assert blank.error.kind == "invalid_arguments" and "/objective" in blank.text
    assert s.call("create_goal", {"objective": "x" * 4001}).error.kind == "invalid_arguments"
    assert s.session.extension(GOALS).current() == g


def test_unknown_goal_id_is_not_found(goals) -> None:
    s = goals()
    g = create(s)
    other = "0" * 32
    result = s.call("update_goal", {"goal_id": other, "revision": 1, "action": "pause"})
    assert other in _error(result, "NOT_FOUND", "not_found")
    assert s.session.extension(GOALS).current() == g


def test_round_limit_disarms_the_goal(goals) -> None:
    """9. limit 2: start_round twice → rounds 1, 2, revision unchanged; then
    should_continue() false with round-limit; start_round() None."""
    s = goals()
    create(s, max_goal_rounds=2)
    book = s.session.extension(GOALS)
    first = book.start_round()
    second = book.start_round()
    assert (first.number, second.number) == (1, 2)
    assert book.current()["revision"] == 1 and book.current()["rounds_started"] == 2
    assert book.should_continue() is False
    g = book.current()
    assert (g["phase"], g["armed"], g["stop_reason"]) == ("active", False, "round-limit")
    assert book.start_round() is None
    on_disk = stored(s)
    assert on_disk["goal"] == g
    s.sync.begin_turn("human")
    text = _error(update(s, g, "resume"), "ROUND_LIMIT")
    assert "2 of its 2" in text
    g = goal(update(s, g, "edit", max_goal_rounds=4))
    g = goal(update(s, g, "resume"))
    assert g["armed"] and book.should_continue()


def test_an_automatic_round_may_only_complete_or_block_its_own_goal(goals) -> None:
    """10. In a round of G: pause → GOAL_USER_AUTHORITY_REQUIRED; complete → complete."""
    s = goals()
    g = create(s)
    s.sync.begin_turn("automatic")
    assert s.session.turn_origin == "automatic"
    assert s.session.extension(GOALS).round.goal_id == g["id"]
    g = s.session.extension(GOALS).current()
    for action, extra in (("pause", {}), ("resume", {}), ("edit", {"objective": "x"})):
        text = _error(update(s, g, action, **extra), "USER_AUTHORITY_REQUIRED")
        assert f"{action} needs a direct human turn" in text
    other = {**g, "id": "f" * 32}
    _error(update(s, other, "complete"), "USER_AUTHORITY_REQUIRED")
    _error(s.call("create_goal", {"objective": "another"}), "USER_AUTHORITY_REQUIRED")
    assert s.session.extension(GOALS).current() == g
    done = body(update(s, g, "complete"))
    assert done["goal"]["phase"] == "complete"
    assert "no further automatic goal round" in done["instruction"]
    assert s.session.extension(GOALS).should_continue() is False


def test_blocked_too_early_in_an_automatic_round(goals) -> None:
    """10. min_rounds_before_block=3 in round 1 → GOAL_BLOCKED_TOO_EARLY."""
    s = goals(config={"goals": {"min_rounds_before_block": 3}})
    g = create(s)
    r = s.session.extension(GOALS).start_round()
    assert r.number == 1
    g = s.session.extension(GOALS).current()
    _error(update(s, g, "blocked", blocked_reason="stuck"), "BLOCKED_TOO_EARLY")
    assert s.session.extension(GOALS).current() == g
    s.session.extension(GOALS).start_round()
    s.session.extension(GOALS).start_round()
    g = goal(update(s, s.session.extension(GOALS).current(), "blocked", blocked_reason="stuck"))
    assert g["phase"] == "blocked"


def test_the_default_allows_blocking_in_round_one_and_humans_anytime(goals) -> None:
    s = goals()
    g = create(s)
    g = goal(update(s, g, "blocked", blocked_reason="human says blocked"))
    assert g["phase"] == "blocked" and g["rounds_started"] == 0
    g = goal(update(s, g, "resume"))
    s.session.extension(GOALS).start_round()
    g = goal(update(s, s.session.extension(GOALS).current(), "blocked",
                    blocked_reason="need input"))
    assert g["phase"] == "blocked"


def test_bad_config_fails_boot(goals) -> None:
    from callgate.host import BootError

    with pytest.raises(BootError, match="min_rounds_before_block"):
        goals(config={"goals": {"min_rounds_before_block": -1}})


def test_blank_block_reason_and_resume_of_an_active_goal(goals) -> None:
    """11. blocked with "  " → GOAL_INVALID_BLOCK_REASON; resume active armed →
    GOAL_INVALID_TRANSITION."""
    s = goals()
    g = create(s)
    assert "blocked requires blocked_reason" in _error(
        update(s, g, "blocked", blocked_reason="  "), "INVALID_BLOCK_REASON")
    _error(update(s, g, "blocked"), "INVALID_BLOCK_REASON")
    assert "already active" in _error(update(s, g, "resume"), "INVALID_TRANSITION")
    assert s.session.extension(GOALS).current() == g


def test_transitions_out_of_the_wrong_phase(goals) -> None:
    s = goals()
    g = goal(update(s, create(s), "pause"))
    assert "cannot pause a goal in phase paused" in _error(update(s, g, "pause"),
                                                           "INVALID_TRANSITION")
    _error(update(s, g, "complete"), "INVALID_TRANSITION")
    _error(update(s, g, "blocked", blocked_reason="x"), "INVALID_TRANSITION")
    g = goal(update(s, g, "edit", objective="still editable while paused"))
    g = goal(update(s, g, "resume"))
    g = goal(update(s, g, "complete"))
    for action, extra in (("edit", {"objective": "x"}), ("resume", {}), ("pause", {})):
        text = _error(update(s, g, action, **extra), "INVALID_TRANSITION")
        assert f"cannot {action} a goal in phase complete" in text


def test_check_order_authority_before_id_before_revision(goals) -> None:
    s = goals(origin=None)
    result = s.call("update_goal", {"goal_id": "0" * 32, "revision": 9, "action": "pause"})
    _error(result, "USER_AUTHORITY_REQUIRED")
    s.sync.begin_turn("human")
    g = create(s)
    result = s.call("update_goal", {"goal_id": "0" * 32, "revision": 9, "action": "edit"})
    _error(result, "NOT_FOUND", "not_found")
    _error(s.call("update_goal", {"goal_id": g["id"], "revision": 9, "action": "edit"}),
           "STALE_REVISION", "stale_version")
    _error(update(s, g, "edit"), "INVALID_EDIT")


def test_round_prompt_names_the_proxy_when_update_goal_is_hidden(goals) -> None:
    """14. Hidden update_goal → prompt has tool:update_goal, the objective, round 1 of
    unlimited."""
    s = goals(lean=True)
    assert "update_goal" not in s.session.tool_names()
    g = create_via_proxy(s)
    r = s.session.extension(GOALS).start_round()
    assert "Automatic goal round 1 of unlimited." in r.prompt
    assert "Objective: Ship v1." in r.prompt
    assert 'capability_id "tool:update_goal"' in r.prompt
    assert f"goal_id={g['id']} revision=1." in r.prompt
    assert (r.goal_id, r.number, r.objective) == (g["id"], 1, "Ship v1")


def test_round_prompt_without_proxy_when_update_goal_is_visible(goals) -> None:
    s = goals()
    create(s, max_goal_rounds=3)
    r = s.session.extension(GOALS).start_round()
    assert "round 1 of 3" in r.prompt and "tool:update_goal" not in r.prompt


def test_times_are_utc_with_z_and_updated_on_change(goals) -> None:
    s = goals()
    g = create(s)
    g2 = goal(update(s, g, "pause"))
    for value in (g2["created_at"], g2["updated_at"]):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", value)
    assert g2["created_at"] == g["created_at"] and g2["updated_at"] >= g["updated_at"]


def test_without_a_session_directory_state_stays_in_memory(callgate_session) -> None:
    import callgate_goals

    s = callgate_session(plugins=[callgate_goals])
    assert s.session.directory is None
    g = create(s)
    assert goal(update(s, g, "pause"))["revision"] == 2


def via_capability(name: str, arguments: Any) -> dict[str, Any]:
    """A ``use_capability`` call of ``tool:<name>``, as a call dict for ``session.run``."""
    return {"name": "use_capability",
            "arguments": {"action": "call", "capability_id": f"tool:{name}",
                          "arguments": arguments}}
