"""Fixtures for the files plugin: a session on a temp workspace, and proof of "unchanged"."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_files
import pytest
from callgate.files import held_paths


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = {**out.get(key, {}), **value} if isinstance(value, dict) else value
    return out


@pytest.fixture
def fs(callgate_session: Callable[..., Any]) -> Callable[..., Any]:
    """``fs(files={...}, config={...}, watch=False, plugins=[...])`` → a CallgateSession
    with the files plugin (the watcher off unless asked)."""

    def make(files: dict[str, str | bytes] | None = None, *, config: dict[str, Any] | None = None,
             watch: bool = False, plugins: tuple[Any, ...] = (), **kwargs: Any) -> Any:
        cfg = _merge({"files": {"watch": watch}}, config or {})
        return callgate_session(plugins=[callgate_files, *plugins], files=files, config=cfg,
                                **kwargs)

    return make


class Unchanged:
    """Snapshot of files (bytes, mode, inode, mtime_ns) and of a directory tree's names;
    `check` asserts nothing moved, no temp was left and no writer lock is held."""

    def __init__(self, root: Path, *paths: str | Path) -> None:
        self.root = root
        self.paths = [root / p for p in paths]
        self.files = {p: self._state(p) for p in self.paths}
        self.tree = self._tree()

    @staticmethod
    def _state(path: Path) -> tuple[Any, ...] | None:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        return data, st.st_mode, st.st_ino, st.st_mtime_ns, st.st_nlink

    def _tree(self) -> set[str]:
        out = set()
        for directory, dirs, files in os.walk(self.root):
            for name in dirs + files:
                out.add(os.path.relpath(os.path.join(directory, name), self.root))
        return out

    def check(self) -> None:
        for path, before in self.files.items():
            assert self._state(path) == before, f"{path} changed"
        assert self._tree() == self.tree, f"tree changed: {self._tree() ^ self.tree}"
        assert not any(".callgate-" in name for name in self._tree())
        assert held_paths() == []


@pytest.fixture
def unchanged() -> Callable[..., Unchanged]:
    return Unchanged


def err(result: Any) -> str:
    """The signature of an error result (fails on success)."""
    assert result.is_error, result.text
    return result.error.signature


def full_text(s: Any, result: Any) -> str:
    """The whole text of a result the core truncated for the model (from the result store)."""
    return s.session.results.find(result.call_id).load().decode()
