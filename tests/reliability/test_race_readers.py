"""Confinement race, the readers that walk (issue 16, defect 1): grep (both engines), glob,
ls, code_index and view_image, and delete_symbol's read-and-replace, on paths through the
directory ``d`` while the racer swaps it for a symlink to outside (`_racer`). No result may
show an outside byte, name or symbol; nothing outside may change.

rg walks by name, so its output is only a candidate list: the engine confirms every line it
shows against the file read again beneath the held root (``_engine_rg.confirmed``).
"""

from __future__ import annotations

import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from callgate import ToolResult

from ._racer import MARK, build
from ._racer import race as racing

pytestmark = pytest.mark.skipif(sys.platform != "linux",
                                reason="the racer uses renameat2(RENAME_EXCHANGE) (Linux)")

ONLY_OUTSIDE_NAME = "zz_outside_only_name"
OUTSIDE_SYMBOL = "outside_symbol_7f3a"


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + \
        struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


PNG = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) + \
    _chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + _chunk(b"IEND", b"")
MARKERS = (MARK, ONLY_OUTSIDE_NAME, OUTSIDE_SYMBOL)


@pytest.fixture
def race(tmp_path: Path, callgate_session: Callable[..., Any], reliability: bool,
         figure: Callable[..., None]) -> Callable[..., dict[str, int]]:
    seconds = 8.0 if reliability else 1.0
    arena = build(
        tmp_path,
        extra_inside={"m.py": b"def inside_fn():\n    return 1\n\n\ndef gone():\n    return 2\n",
                      "pic.png": PNG},
        extra_outside={f"{ONLY_OUTSIDE_NAME}.txt": f"{MARK}\n".encode(),
                       "m.py": f"def {OUTSIDE_SYMBOL}():\n    return 1\n\n\ndef gone():\n"
                               f"    return '{MARK}'\n".encode(),
                       "pic.png": PNG + MARK.encode()})

    def run(name: str, step: Callable[[Any, int], list[ToolResult]],
            config: dict[str, Any] | None = None) -> dict[str, int]:
        s = callgate_session(entrypoints=["files", "search", "code", "media"],
                             workspace=arena.workspace,
                             config={"files": {"watch": False}, **(config or {})})
        return racing(s, arena, name, step, seconds, figure, MARKERS)

    return run


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_grep_never_shows_outside_lines(race: Callable[..., dict[str, int]], engine: str
                                        ) -> None:
    counts = race(f"grep ({engine})", lambda s, i: [
        s.call("grep", pattern=".", path="."),
        s.call("grep", pattern=".", path="d"),
        s.call("grep", pattern=".", path="d/f.txt")],
        config={"search": {"grep_engine": engine}})
    assert counts["ok"] > 0


def test_glob_and_ls_never_list_outside_names(race: Callable[..., dict[str, int]]) -> None:
    race("glob + ls", lambda s, i: [
        s.call("glob", pattern="**/*.txt"),
        s.call("glob", pattern="d/*"),
        s.call("ls", path=".", recursive=True),
        s.call("ls", path="d")])


def test_code_index_never_indexes_outside_files(race: Callable[..., dict[str, int]]) -> None:
    race("code_index", lambda s, i: [
        s.call("code_index", action="outline", path="."),
        s.call("code_index", action="outline", path="d/m.py")])


def test_view_image_never_shows_outside_bytes(race: Callable[..., dict[str, int]]) -> None:
    race("view_image", lambda s, i: [s.call("view_image", path="d/pic.png")])


def test_delete_symbol_never_reads_or_rewrites_outside(race: Callable[..., dict[str, int]]
                                                       ) -> None:
    race("delete_symbol", lambda s, i: [
        s.call("read_file", path="d/m.py"),
        s.call("delete_symbol", {"path": "d/m.py", "name": "gone"})])
