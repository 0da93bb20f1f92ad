"""Previews for approvals (files.md §7; statements 53-55)."""

from __future__ import annotations

import json

from callgate import hookimpl
from callgate_toolkit.diffs import FilePreview

from .conftest import err

ASK = {"permissions": {"mode": "ask"}}


class Approver:
    """Approves (or refuses) every ask, keeping the previews it was shown."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.previews: list[FilePreview] = []
        self.meanwhile = None

    @hookimpl
    def callgate_ask_permission(self, call, tool, session, preview):
        self.previews.append(preview)
        if self.meanwhile is not None:
            self.meanwhile()
        return self.answer


def _ask_session(fs, files, answer=True):
    approver = Approver(answer)
    s = fs(files, config=ASK, plugins=(approver,))
    return s, approver


def test_preview_kinds_counts_and_bytes_equal_execution(fs):  # 53
    nb = json.dumps({"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {},
                                "outputs": [], "source": ["x"]}], "metadata": {},
                     "nbformat": 4, "nbformat_minor": 4}, indent=1) + "\n"
    s, approver = _ask_session(fs, {"e.txt": "one\ntwo\nthree\n", "f.txt": "a   \nb\n",
                                    "o.txt": "old\r\n", "n.ipynb": nb, "r.txt": "1\n2\n3\n",
                                    "m.txt": "p q\n"})
    for name in ("e.txt", "f.txt", "o.txt", "n.ipynb", "r.txt", "m.txt"):
        s.call("read_file", path=name)
    calls = [
        ("write_file", {"path": "c.txt", "content": "a\nb\nc\n"}, "c.txt"),
        ("edit_file", {"path": "e.txt", "old_string": "two", "new_string": "TWO"}, "e.txt"),
        ("write_file", {"path": "o.txt", "content": "new\n"}, "o.txt"),
        ("edit_file", {"path": "f.txt", "old_string": "a\nb", "new_string": "A\nB"}, "f.txt"),
        ("multi_edit", {"path": "m.txt", "edits": [{"old_string": "p", "new_string": "P"},
                                                   {"old_string": "q", "new_string": "Q"}]},
         "m.txt"),
        ("delete_range", {"path": "r.txt", "start_anchor": "2", "end_anchor": "2"}, "r.txt"),
        ("notebook_edit", {"path": "n.ipynb", "cell_number": 0, "new_source": "y"}, "n.ipynb"),
    ]
    for name, args, path in calls:
        r = s.call(name, args)
        assert not r.is_error, (name, r.text)
        p = approver.previews[-1]
        assert p.new_bytes == s.read(path), name
    create, modify = approver.previews[0], approver.previews[1]
    assert (create.kind, create.added, create.removed, create.old_bytes) == ("create", 3, 0, None)
    assert create.diff.startswith("--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1,3 @@")
    assert (modify.kind, modify.added, modify.removed) == ("modify", 1, 1)
    assert modify.old_bytes == b"one\ntwo\nthree\n" and modify.base_version is not None
    assert approver.previews[2].new_bytes == b"new\r\n"


def test_previews_change_nothing_and_fail_like_execution(fs, unchanged):  # 54
    s, approver = _ask_session(fs, {"a.txt": "a\n", "b.txt": "b\n"}, answer=False)
    s.call("read_file", path="a.txt")
    ledger = s.session.observations()
    before = unchanged(s.workspace, "a.txt", "b.txt")
    for name, args in [("edit_file", {"path": "a.txt", "old_string": "a", "new_string": "x"}),
                       ("write_file", {"path": "new/c.txt", "content": "c"}),
                       ("move_file", {"source_path": "a.txt", "destination_path": "d/e.txt"})]:
        r = s.call(name, args)
        assert r.error.kind == "blocked", r.text
    assert [p.kind for p in approver.previews] == ["modify", "create", "rename"]
    before.check()
    assert s.session.observations() == ledger
    r = s.call("edit_file", path="b.txt", old_string="b", new_string="x")
    assert err(r) == "FS_NOT_OBSERVED" and len(approver.previews) == 3
    r = s.call("write_file", path="gone.txt", content="x")  # missing: no Absent recorded
    assert s.session.observations() == ledger


def test_change_between_preview_and_execution_is_stale(fs):  # 55
    s, approver = _ask_session(fs, {"a.txt": "one\ntwo\n"})
    s.call("read_file", path="a.txt")

    def meanwhile():
        s.path("a.txt").write_text("one\ntwo\nthree\n")

    approver.meanwhile = meanwhile
    r = s.call("edit_file", path="a.txt", old_string="two", new_string="2")
    assert err(r) == "FS_STALE_VERSION"
    assert s.read("a.txt") == b"one\ntwo\nthree\n"
