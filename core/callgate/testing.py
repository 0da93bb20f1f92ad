"""pytest fixtures for testing tools through the whole pipeline (``pytest11`` plugin).

::

    def test_word_count(callgate_session):
        session = callgate_session(plugins=[my_plugin], files={"a.txt": "x y"})
        [result] = session.run({"name": "word_count", "arguments": {"path": "a.txt"}})
        assert result.text == "2"

``callgate_session(...)`` boots a host with exactly the plugins given (entry
points are not loaded unless asked), opens a session on a fresh temporary
workspace, and closes everything at teardown.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from . import sync
from ._model import ToolCall, ToolResult

__all__ = ["CallgateSession", "callgate_session"]

_ids = itertools.count(1)


def as_call(call: ToolCall | Mapping[str, Any] | tuple[str, Any]) -> ToolCall:
    """A `ToolCall` from a call, a ``{"name", "arguments", "id"?}`` dict or a (name, args) pair."""
    if isinstance(call, ToolCall):
        return call
    if isinstance(call, tuple):
        name, arguments = call
        return ToolCall(f"t{next(_ids)}", name, arguments)
    return ToolCall(call.get("id") or f"t{next(_ids)}", call["name"], call.get("arguments"))


class CallgateSession:
    """A host + session on a temp workspace, driven synchronously."""

    def __init__(self, host: sync.Host, session: sync.Session, workspace: Path) -> None:
        self.host = host
        self.sync = session
        self.session = session.session
        self.workspace = workspace

    def run(self, *calls: ToolCall | Mapping[str, Any] | tuple[str, Any]) -> list[ToolResult]:
        """Run the calls as one batch; returns their results in call order."""
        return self.sync.run_batch([as_call(c) for c in calls])

    def call(self, name: str, arguments: Any = None, **kwargs: Any) -> ToolResult:
        """Run one call: ``call("read_file", {"path": "a.txt"})`` or ``call("ls", path=".")``."""
        [result] = self.run(ToolCall(f"t{next(_ids)}", name,
                                     arguments if arguments is not None else kwargs))
        return result

    def path(self, rel: str) -> Path:
        return self.workspace / rel

    def write(self, rel: str, content: str | bytes) -> Path:
        target = self.workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_bytes(content.encode())
        return target

    def read(self, rel: str) -> bytes:
        return (self.workspace / rel).read_bytes()

    def child(self) -> CallgateSession:
        """A child session (empty observation ledger) on the same host and workspace."""
        child = sync.Session(self.host, self.host.portal.call(self._open_child))
        return CallgateSession(self.host, child, self.workspace)

    async def _open_child(self) -> Any:
        return self.session.open_child()

    def close(self) -> None:
        self.sync.close()


def make_session_factory(tmp_path_factory: pytest.TempPathFactory
                         ) -> tuple[Callable[..., CallgateSession], list[sync.Host]]:
    hosts: list[sync.Host] = []

    def factory(plugins: Sequence[Any] = (), *, files: Mapping[str, str | bytes] | None = None,
                config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
                entrypoints: bool | Sequence[str] = False, surface: str = "full",
                os_name: str = "auto", workspace: str | os.PathLike[str] | None = None,
                session_dir: str | os.PathLike[str] | None = None,
                origin: str | None = "human", host: sync.Host | None = None) -> CallgateSession:
        ws = Path(workspace) if workspace else tmp_path_factory.mktemp("ws")
        for rel, content in (files or {}).items():
            target = ws / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content if isinstance(content, bytes) else content.encode())
        if host is None:
            host = sync.Host.boot(config if config is not None else {}, plugins=list(plugins),
                                  entrypoints=entrypoints, surface=surface, os=os_name)
            hosts.append(host)
        session = host.open_session(ws, session_dir=session_dir, origin=origin)
        return CallgateSession(host, session, ws)

    return factory, hosts


@pytest.fixture
def callgate_session(tmp_path_factory: pytest.TempPathFactory
                     ) -> Iterator[Callable[..., CallgateSession]]:
    """A factory of `CallgateSession`s; every host and session is closed at teardown."""
    factory, hosts = make_session_factory(tmp_path_factory)
    yield factory
    for host in hosts:
        host.close()
