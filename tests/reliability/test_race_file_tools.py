"""Confinement race, the file tools (issue 16, defect 1): while a background process swaps the
directory ``d`` for a symlink to a directory outside the workspace (`_racer`), each file tool
works on a path through ``d`` again and again for a few seconds. A call may fail; nothing it
does may reach outside: no result shows outside bytes, and the outside directory (a file, a
dead writer's stale temp) is byte-for-byte, inode and mtime as it was.

Covered: read_file; write_file creating; read_file + write_file / edit_file overwriting;
move_file out of and into ``d``; the stale-temp sweep before each publish (the outside stale
temp must survive) and at session start; and a third-party tool using the public file API
(``ctx.files.read_text`` / ``write_text``, ``ResolvedPath.open``).

Before the fix (main at 492e27e) each of these reached outside within a second or two
(docs/reliability.md, "Confinement races").
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from callgate import ToolResult
from callgate_files import FILE_WATCH

from . import _api_tools
from ._racer import INSIDE, MARK, build
from ._racer import race as racing

pytestmark = pytest.mark.skipif(sys.platform != "linux",
                                reason="the racer uses renameat2(RENAME_EXCHANGE) (Linux)")

COMMON = "common"


@pytest.fixture
def race(tmp_path: Path, callgate_session: Callable[..., Any], reliability: bool,
         figure: Callable[..., None]) -> Callable[..., dict[str, int]]:
    """``race(name, step, plugins=())``: `_racer.race` on a fresh session of the files
    plugin (plus ``plugins``) in the arena."""
    seconds = 8.0 if reliability else 1.0
    arena = build(tmp_path, extra_inside={"g.txt": f"inside\n{COMMON}\n".encode()},
                  extra_outside={"g.txt": f"{MARK}\n{COMMON}\n".encode(),
                                 "v.txt": f"{MARK} victim\n".encode()})

    def run(name: str, step: Callable[[Any, int], list[ToolResult]],
            plugins: tuple[Any, ...] = ()) -> dict[str, int]:
        s = callgate_session(plugins=plugins, entrypoints=["files"],
                             workspace=arena.workspace, config={"files": {"watch": False}})
        # reach where the tools run before the clock starts (a remote session starts its
        # worker on its first call: under load that took the whole race's second); a path
        # that does not exist: nothing observed, nothing in d touched
        assert s.call("read_file", path="warm-up-absent.txt").is_error
        return racing(s, arena, name, step, seconds, figure)

    return run


def test_read_file_never_reads_outside(race: Callable[..., dict[str, int]]) -> None:
    counts = race("read_file", lambda s, i: [s.call("read_file", path="d/f.txt")])
    assert counts["ok"] > 0  # the inside file was read whenever d was the real directory


def test_write_file_never_creates_outside(race: Callable[..., dict[str, int]]) -> None:
    race("write_file create",
         lambda s, i: [s.call("write_file", path=f"d/new-{i}.txt", content="x\n")])


def test_read_then_write_file_never_overwrites_outside(race: Callable[..., dict[str, int]]
                                                       ) -> None:
    race("read_file + write_file", lambda s, i: [
        s.call("read_file", path="d/f.txt"),
        s.call("write_file", path="d/f.txt", content=f"version {i}\n")])


def test_read_then_edit_file_never_edits_outside(race: Callable[..., dict[str, int]]) -> None:
    race("read_file + edit_file", lambda s, i: [
        s.call("read_file", path="d/g.txt"),
        s.call("edit_file", path="d/g.txt", old_string=COMMON, new_string=COMMON + "!")])


def test_move_file_never_moves_outside_files_in_or_out(race: Callable[..., dict[str, int]]
                                                       ) -> None:
    def step(s: Any, i: int) -> list[ToolResult]:
        # out of d: the outside v.txt must stay; into d: nothing may appear outside
        return [s.call("read_file", path="d/v.txt"),
                s.call("move_file", source_path="d/v.txt", destination_path=f"got-{i}.txt"),
                s.call("write_file", path=f"m-{i}.txt", content="m\n"),
                s.call("move_file", source_path=f"m-{i}.txt", destination_path=f"d/m-{i}.txt")]

    race("move_file", step)


def test_publish_sweep_never_removes_an_outside_stale_temp(
        race: Callable[..., dict[str, int]]) -> None:
    """Every publish sweeps dead writers' temps in its directory first: with ``d`` swapped,
    that directory must still be the inside one (the outside STALE temp stays)."""
    race("stale-temp sweep before publish", lambda s, i: [
        s.call("write_file", path=f"d/s-{i}.txt", content="s\n"),
        s.call("read_file", path="d/f.txt"),
        s.call("write_file", path="d/f.txt", content=INSIDE)])


def test_session_start_sweep_never_leaves_the_workspace(
        race: Callable[..., dict[str, int]], callgate_session: Callable[..., Any]) -> None:
    """The background sweep of a new session walks the write roots; a swapped directory is
    skipped, never entered through the link."""

    def step(s: Any, i: int) -> list[ToolResult]:
        fresh = callgate_session(host=s.host, workspace=s.workspace)
        try:
            assert fresh.session.extension(FILE_WATCH).sweep_done.wait(10)
        finally:
            fresh.close()
        return [s.call("read_file", path="d/f.txt")]

    race("stale-temp sweep at session start", step)


def test_public_file_api_never_reaches_outside(race: Callable[..., dict[str, int]]) -> None:
    """What third-party tools use (``ctx.files``, ``ResolvedPath.open``) holds the same line."""
    race("public file API", lambda s, i: [
        s.call("peek", path="d/f.txt"),
        s.call("peek_fd", path="d/f.txt"),
        s.call("poke", path="d/f.txt", text=f"poked {i}\n"),
        s.call("poke", path=f"d/p-{i}.txt", text="p\n")], plugins=(_api_tools,))


def test_the_component_walk_holds_the_line_too(race: Callable[..., dict[str, int]]) -> None:
    """Where openat2 is missing (older kernels, seccomp filters, macOS) the component walk
    with O_NOFOLLOW does the job: the same attacks, the same result."""
    from callgate._fs import confine
    from callgate.paths import confinement_mechanism

    confine.use_openat2(False)
    try:
        assert confinement_mechanism() == "walk"
        race("component walk (no openat2)", lambda s, i: [
            s.call("read_file", path="d/f.txt"),
            s.call("write_file", path="d/f.txt", content=f"version {i}\n"),
            s.call("write_file", path=f"d/w-{i}.txt", content="w\n"),
            s.call("read_file", path="d/v.txt"),
            s.call("move_file", source_path="d/v.txt", destination_path=f"got-{i}.txt"),
            s.call("peek", path="d/f.txt")], plugins=(_api_tools,))
    finally:
        confine.use_openat2(True)
