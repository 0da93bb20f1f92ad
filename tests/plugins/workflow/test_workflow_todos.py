"""todo_write through the full pipeline (goals-and-workflow.md §2; statements 15-17)."""

from __future__ import annotations

from callgate_workflow import TODOS

from .conftest import stored


def _todos(*items) -> dict:
    return {"todos": [dict(i) for i in items]}


def item(content: str, status: str = "pending", **extra) -> dict:
    return {"content": content, "status": status, **extra}


def test_new_items_get_t1_t2_t3_and_an_acknowledgement(workflow) -> None:
    """15. Three items without ids → t1, t2, t3 and the counts line."""
    s = workflow()
    result = s.call("todo_write", _todos(item("Write parser"), item("Test parser"),
                                         item("Release notes")))
    assert not result.is_error, result.text
    assert result.text.splitlines() == [
        "Todos updated: 3 total — 0 completed, 0 in progress, 3 pending.",
        "- [t1] pending: Write parser",
        "- [t2] pending: Test parser",
        "- [t3] pending: Release notes",
    ]
    assert [t.id for t in s.session.extension(TODOS).items()] == ["t1", "t2", "t3"]


def test_same_contents_reordered_keep_their_ids_and_dropped_items_are_reported(workflow):
    """16. Reordered → same ids; dropping pending t2 warns; dropping completed t1 does not."""
    s = workflow()
    s.call("todo_write", _todos(item("Write parser"), item("Test parser"),
                                item("Release notes")))
    result = s.call("todo_write", _todos(item("Release notes"), item(" Write parser ",
                                                                    "completed"),
                                         item("Test parser", "in_progress")))
    assert result.text.splitlines()[1:] == ["- [t3] pending: Release notes",
                                            "- [t1] completed: Write parser",
                                            "- [t2] in_progress: Test parser"]
    assert "1 completed, 1 in progress, 1 pending." in result.text
    assert "Warning" not in result.text
    dropped = s.call("todo_write", _todos(item("Release notes"),
                                          item("Write parser", "completed")))
    assert ('Warning: 1 unfinished item was dropped: [t2] "Test parser" (in_progress). '
            "Include it again if that was not intended.") in dropped.text
    quiet = s.call("todo_write", _todos(item("Release notes", id="t3")))
    assert "Warning" not in quiet.text
    assert quiet.text.splitlines()[1:] == ["- [t3] pending: Release notes"]


def test_dropping_pending_t2_is_named_in_the_warning(workflow) -> None:
    """16, literally: dropping pending t2 → `Warning: 1 unfinished item was dropped: [t2]`."""
    s = workflow()
    s.call("todo_write", _todos(item("A", "completed"), item("B"), item("C")))
    result = s.call("todo_write", _todos(item("A", "completed"), item("C")))
    assert "Warning: 1 unfinished item was dropped: [t2]" in result.text
    again = s.call("todo_write", _todos(item("C")))
    assert "Warning" not in again.text and "[t3] pending: C" in again.text


def test_several_dropped_items_and_new_ids_continue_the_sequence(workflow) -> None:
    s = workflow()
    s.call("todo_write", _todos(item("A"), item("B")))
    result = s.call("todo_write", _todos(item("C", "in_progress")))
    assert "[t3] in_progress: C" in result.text
    assert ('Warning: 2 unfinished items were dropped: [t1] "A" (pending), [t2] "B" '
            "(pending). Include them again if that was not intended.") in result.text
    again = s.call("todo_write", _todos(item("C", "in_progress"), item("A")))
    assert "[t4] pending: A" in again.text  # t1 was released; new ids never go back


def test_supplied_ids_are_kept_and_never_collide_with_issued_ones(workflow) -> None:
    s = workflow()
    result = s.call("todo_write", _todos(item("X", id="t7"), item("Y"), item("Z", id="build")))
    assert result.text.splitlines()[1:] == ["- [t7] pending: X", "- [t8] pending: Y",
                                            "- [build] pending: Z"]


def test_levels_and_active_forms_are_kept(workflow) -> None:
    s = workflow()
    s.call("todo_write", _todos(item("Ship", "in_progress", active_form="Shipping"),
                                item("Tag", level=1)))
    items = s.session.extension(TODOS).items()
    assert items[0].active_form == "Shipping" and items[1].level == 1
    listing = s.call("todo_write", _todos(item("Ship", "in_progress"), item("Tag", level=1)))
    assert "\n  - [t2] pending: Tag" in listing.text


def test_invalid_lists_change_nothing(workflow) -> None:
    """17. Status done → validation error, list unchanged; duplicate id "a"; two items in
    progress are fine."""
    s = workflow()
    s.call("todo_write", _todos(item("Keep me")))
    before = stored(s, "todos")
    bad = s.call("todo_write", _todos(item("X", "done")))
    assert bad.error.kind == "invalid_arguments" and "/todos/0/status" in bad.text
    dup = s.call("todo_write", _todos(item("X", id="a"), item("Y", id="a")))
    assert dup.error.kind == "invalid_arguments"
    assert 'todo 1: duplicate id "a" (also todo 0)' in dup.text
    blank = s.call("todo_write", _todos(item("ok"), item("   ")))
    assert blank.error.kind == "invalid_arguments"
    assert "todo 1: content is required" in blank.text
    assert blank.error.signature.startswith("argument_validation:todo_write:")
    for args in ({"todos": [item("x", level=2)]}, {"todos": [item("x", extra=1)]},
                 {"todos": [item("x" * 501)]}, {"todos": [item("x", id="no spaces")]},
                 {"todos": [item(f"i{i}") for i in range(101)]}, {}):
        assert s.call("todo_write", args).error.kind == "invalid_arguments", args
    assert [t.content for t in s.session.extension(TODOS).items()] == ["Keep me"]
    assert stored(s, "todos") == before
    ok = s.call("todo_write", _todos(item("A", "in_progress"), item("B", "in_progress")))
    assert "0 completed, 2 in progress, 0 pending." in ok.text


def test_an_empty_list_is_allowed(workflow) -> None:
    s = workflow()
    s.call("todo_write", _todos(item("A", "completed")))
    result = s.call("todo_write", {"todos": []})
    assert result.text == "Todos updated: 0 total — 0 completed, 0 in progress, 0 pending."


def test_todos_persist_and_are_restored_on_reopen(workflow) -> None:
    s = workflow()
    s.call("todo_write", _todos(item("A"), item("B", "completed")))
    data = stored(s, "todos")
    assert data["version"] == 1 and [t["id"] for t in data["todos"]] == ["t1", "t2"]
    s.close()
    again = workflow(host=s.host, workspace=s.workspace)
    assert [(t.id, t.content) for t in again.session.extension(TODOS).items()] == [("t1", "A"),
                                                                      ("t2", "B")]
    result = again.call("todo_write", _todos(item("B", "completed"), item("C")))
    assert "[t2] completed: B" in result.text and "[t3] pending: C" in result.text
    assert "[t1]" in result.text  # the dropped pending item is reported after a restart


def test_todo_write_is_read_only_and_hidden(workflow) -> None:
    s = workflow(lean=True)
    assert "todo_write" not in s.session.tool_names()
    spec = s.host.registry.get("todo_write")
    assert spec.contract_read_only and spec.visibility == "hidden"
