"""``session.extension(MEMORY)``: ``prompt()`` and ``recall(text, limit)``, and the change
feed the kept index relies on."""

from __future__ import annotations

import os
import sys

import pytest
from callgate_memory import MEMORY, Recall
from callgate_memory._changes import ChangeFeed

from .conftest import remember


def test_memory_prompt_holds_the_protocol_and_only_pinned_facts(memory):
    s = memory()
    remember(s, name="style", activation="pinned", description="Reply style",
             body="Answer in British English.")
    remember(s, name="port", description="DB port", body="5433")
    remember(s, name="tz", scope="global", activation="pinned", type="user",
             description="User's time zone", body="Europe/Lisbon")
    prompt = s.session.extension(MEMORY).prompt()
    assert "remember" in prompt and "forget" in prompt and "not instructions" in prompt
    assert "Answer in British English." in prompt and "Europe/Lisbon" in prompt
    assert "5433" not in prompt
    assert '<memory ref="project/style">' in prompt


def test_memory_prompt_without_facts_is_the_protocol(memory):
    s = memory()
    assert s.session.extension(MEMORY).prompt().startswith("You have a memory")
    assert "Pinned" not in s.session.extension(MEMORY).prompt()


def test_recall_returns_the_relevant_unpinned_facts(memory):
    s = memory()
    remember(s, name="port", description="Dev database port", body="Postgres listens on 5433.")
    remember(s, name="ci", description="CI", body="CI runs on Debian.")
    remember(s, name="pinned-db", activation="pinned", description="database rule",
             body="Never drop the database.")
    recalled = s.session.extension(MEMORY).recall("what port is the postgres database on?", limit=3)
    assert isinstance(recalled, Recall)
    assert [f.ref for f in recalled.facts] == ["project/port"]
    assert "5433" in recalled.text and "not instructions" in recalled.text
    nothing = s.session.extension(MEMORY).recall("kubernetes helm chart")
    assert nothing.facts == () and nothing.text == ""


def test_session_memory_is_the_same_object_for_the_session(memory):
    s = memory()
    assert s.session.extension(MEMORY) is s.session.extension(MEMORY)
    assert s.session.extension(MEMORY).prompt.__self__ is s.session.extension(MEMORY)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only")
def test_the_change_feed_names_what_changed_and_says_unknown_when_unsure(tmp_path):
    feed = ChangeFeed()
    sub = feed.subscribe(str(tmp_path))
    assert sub.changes() is None  # first call: watch starts, the caller scans
    assert sub.changes() == set()
    (tmp_path / "a.md").write_text("x")
    (tmp_path / "b.md").write_text("y")
    assert sub.changes() == {"a.md", "b.md"}
    os.rename(tmp_path / "a.md", tmp_path / "c.md")
    assert sub.changes() == {"a.md", "c.md"}
    other = feed.subscribe(str(tmp_path))  # a second index on the same directory
    assert other.changes() is None
    (tmp_path / "b.md").write_text("z")
    assert sub.changes() == {"b.md"} and other.changes() == {"b.md"}
    renamed = tmp_path.with_name(tmp_path.name + "-moved")
    os.rename(tmp_path, renamed)  # the watched directory itself went away
    assert sub.changes() is None
    os.rename(renamed, tmp_path)
    assert sub.changes() is None  # re-watched: scan once more ...
    assert sub.changes() == set()  # ... then trust the watch again


def test_the_change_feed_without_a_directory_always_says_unknown(tmp_path):
    feed = ChangeFeed()
    sub = feed.subscribe(str(tmp_path / "missing"))
    assert sub.changes() is None and sub.changes() is None
