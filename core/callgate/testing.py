"""pytest fixtures for testing tools through the whole pipeline (``pytest11`` plugin).

::

    def test_word_count(callgate_session):
        session = callgate_session(plugins=[my_plugin], files={"a.txt": "x y"})
        [result] = session.run({"name": "word_count", "arguments": {"path": "a.txt"}})
        assert result.text == "2"

``callgate_session(...)`` boots a host with exactly the plugins given (entry
points are not loaded unless asked), opens a session on a fresh temporary
workspace, and closes everything at teardown.

Tool arguments are one dict: ``session.call("word_count", {"path": "a.txt"})``
(``call`` also takes them as keywords, ``session.call("word_count", path="a.txt")``,
but never both at once). Assertions read like the contract:
``session.expect_ok("word_count", {"path": "a.txt"})`` returns the text of a successful
call; ``session.expect_error("word_count", {"path": "nope"}, kind="not_found")`` returns
the failed result (their keywords are the assertion's, never the tool's); and
``before = session.snapshot()`` ... ``session.assert_unchanged(before)`` proves a
refusal changed nothing (bytes, mode, mtime, no stray files). `run_replay` runs
``callgate replay`` in a subprocess, the way a model's transcript would reach an
installed plugin through its entry point.

Hermetic by default: every test gets a private, empty callgate state directory
(``$CALLGATE_HOME``) and user config directory (``$CALLGATE_CONFIG_HOME``), inherited by
`run_replay`'s subprocess, so the author's own config (a deny rule, a mode) never decides a
test and no test writes to their real session store. A test that means to use them opts in
with ``@pytest.mark.callgate_user_dirs``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from . import process, sync
from ._model.values import ToolCall, ToolResult

__all__ = ["CallgateSession", "assert_error", "assert_ok", "callgate_session", "run_replay"]

_ids = itertools.count(1)

#: the marker a test carries to use the user's real callgate state and config directories
USER_DIRS_MARKER = "callgate_user_dirs"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{USER_DIRS_MARKER}: use the user's real callgate state and config "
        "directories instead of private empty ones (callgate.testing is hermetic by default)",
    )


@pytest.fixture(autouse=True)
def _callgate_private_dirs(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A private, empty ``$CALLGATE_HOME`` and ``$CALLGATE_CONFIG_HOME`` for every test (and
    the subprocesses it starts), unless it is marked ``callgate_user_dirs``."""
    if request.node.get_closest_marker(USER_DIRS_MARKER) is not None:
        return
    monkeypatch.setenv("CALLGATE_HOME", str(tmp_path_factory.mktemp("callgate-home")))
    monkeypatch.setenv("CALLGATE_CONFIG_HOME", str(tmp_path_factory.mktemp("callgate-config")))


def assert_ok(result: ToolResult, text: str | None = None, *, contains: str | None = None) -> str:
    """Fail unless ``result`` succeeded (and, if given, has exactly ``text`` or ``contains``
    it); returns its text."""
    __tracebackhide__ = True
    if result.is_error:
        kind = result.error.kind if result.error else "?"
        pytest.fail(f"{result.name} failed ({kind}):\n{result.text}")
    if text is not None and result.text != text:
        pytest.fail(f"{result.name} returned {result.text!r}, expected {text!r}")
    if contains is not None and contains not in result.text:
        pytest.fail(f"{result.name} returned {result.text!r}, which lacks {contains!r}")
    return result.text


def assert_error(
    result: ToolResult,
    kind: str | None = None,
    signature: str | None = None,
    *,
    contains: str | None = None,
) -> ToolResult:
    """Fail unless ``result`` is an error (of ``kind`` when given, and ``signature``, and text
    containing ``contains``); returns the result."""
    __tracebackhide__ = True
    if not result.is_error or result.error is None:
        expected = f"a {kind} error" if kind is not None else "an error"
        pytest.fail(f"{result.name} succeeded, expected {expected}:\n{result.text}")
    if kind is not None and result.error.kind != kind:
        pytest.fail(f"{result.name} failed as {result.error.kind}, expected {kind}:\n{result.text}")
    if signature is not None and result.error.signature != signature:
        pytest.fail(
            f"{result.name} has signature {result.error.signature!r}, expected {signature!r}"
        )
    if contains is not None and contains not in result.text:
        pytest.fail(f"{result.name}'s error text lacks {contains!r}:\n{result.text}")
    return result


def run_replay(
    lines: Sequence[Mapping[str, Any] | str],
    workspace: str | os.PathLike[str],
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> list[dict[str, Any]]:
    """Run ``callgate replay`` in a subprocess on ``workspace`` and return its result lines.

    ``lines`` are transcript lines (dicts are JSON-encoded); ``args`` are extra options
    (``"--surface", "full"``, ``"--approve", "all"``...); ``env`` is added to the
    environment (``{"CALLGATE_LOAD_PLUGINS": "my_plugin"}`` loads only that entry point).
    The command is ``callgate-cli``'s (``callgate[all]`` installs it).
    """
    __tracebackhide__ = True
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    argv = [
        sys.executable,
        "-m",
        "callgate_cli",  # the `callgate` command's distribution, callgate-cli
        "replay",
        "-",
        "--workspace",
        os.fspath(workspace),
        *args,
    ]
    everything = process.Environment(secrets=True, path_from_workspace=True, set=env or {})
    proc = process.prepare(
        None, argv, sandbox="off", env=everything, purpose="callgate replay"
    ).run(input=text, timeout=timeout, text=True)
    if proc.returncode != 0:
        pytest.fail(f"callgate replay exited {proc.returncode}:\n{proc.stderr}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


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

    def call(self, name: str, arguments: Any = None, /, **kwargs: Any) -> ToolResult:
        """Run one call: ``call("read_file", {"path": "a.txt"})`` or ``call("ls", path=".")``.

        ``arguments`` is sent as given (a dict, the JSON text a provider sends, or anything
        else, to test what the host answers); the keywords are the tool's arguments. Giving
        both is a `TypeError`: one would silently hide the other."""
        if arguments is not None and kwargs:
            raise TypeError(
                f"give {name}'s arguments as one dict or as keywords, not both "
                f"(keywords: {', '.join(sorted(kwargs))})"
            )
        [result] = self.run(
            ToolCall(f"t{next(_ids)}", name, arguments if arguments is not None else kwargs)
        )
        return result

    def expect_ok(
        self,
        name: str,
        arguments: Any = None,
        /,
        *,
        text: str | None = None,
        contains: str | None = None,
    ) -> str:
        """Run one call (its arguments in one dict) and fail unless it succeeds; returns its
        text (which must be ``text`` or contain ``contains``, when given)."""
        __tracebackhide__ = True
        return assert_ok(self.call(name, arguments), text, contains=contains)

    def expect_error(
        self,
        name: str,
        arguments: Any = None,
        /,
        *,
        kind: str | None = None,
        signature: str | None = None,
        contains: str | None = None,
    ) -> ToolResult:
        """Run one call (its arguments in one dict) and fail unless it is an error (of
        ``kind`` when given, and ``signature``, and text containing ``contains``); returns
        the result."""
        __tracebackhide__ = True
        return assert_error(self.call(name, arguments), kind, signature, contains=contains)

    def argument_signature(self, tool: str, code: str) -> str:
        """The signature a tool's own ``ToolError("invalid_arguments", ..., code)`` carries
        once the host puts it in the contract's form:
        ``argument_validation:<tool>:<schema fingerprint>:<code, lowercased>``."""
        spec = self.session.host.registry.get(tool)
        if spec is None:
            raise KeyError(f"no tool {tool!r} is registered")
        fingerprint = self.session.host.compiled(spec).short_fingerprint
        category = re.sub(r"[^a-z0-9_]+", "_", code.lower()).strip("_") or "tool"
        return f"argument_validation:{tool}:{fingerprint}:{category}"

    def snapshot(self) -> dict[str, tuple[bytes | str, int, int]]:
        """Every entry under the workspace: ``{relative path: (bytes or link target, mode,
        mtime_ns)}``; a directory is ``(b"", mode, 0)`` (its mtime moves whenever an entry
        comes or goes, which the entries themselves show). Compare with `assert_unchanged`."""
        out: dict[str, tuple[bytes | str, int, int]] = {}
        for root, dirs, files in os.walk(self.workspace):
            for name in sorted(dirs + files):
                full = os.path.join(root, name)
                st = os.lstat(full)
                rel = os.path.relpath(full, self.workspace)
                if os.path.islink(full):
                    out[rel] = (os.readlink(full), st.st_mode, st.st_mtime_ns)
                elif os.path.isdir(full):
                    out[rel] = (b"", st.st_mode, 0)
                else:
                    with open(full, "rb") as fh:
                        out[rel] = (fh.read(), st.st_mode, st.st_mtime_ns)
        return out

    def assert_unchanged(self, before: Mapping[str, tuple[bytes | str, int, int]]) -> None:
        """Fail if any file was added, removed or changed (bytes, mode or mtime) since
        ``before = self.snapshot()``."""
        __tracebackhide__ = True
        after = self.snapshot()
        added, removed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
        changed = sorted(k for k in set(after) & set(before) if after[k] != before[k])
        if added or removed or changed:
            pytest.fail(
                f"the workspace changed: added {added}, removed {removed}, changed {changed}"
            )

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

    def child(self, profile: Any = None) -> CallgateSession:
        """A child session (empty observation ledger) on the same host and workspace, with
        ``profile`` (a `callgate.ChildProfile`) when given."""
        child = sync.Session(self.host, self.host.portal.call(self._open_child, profile))
        return CallgateSession(self.host, child, self.workspace)

    async def _open_child(self, profile: Any = None) -> Any:
        return self.session.open_child(profile=profile)

    def close(self) -> None:
        self.sync.close()


def make_session_factory(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Callable[..., CallgateSession], list[sync.Host]]:
    hosts: list[sync.Host] = []

    def factory(
        plugins: Sequence[Any] = (),
        *,
        files: Mapping[str, str | bytes] | None = None,
        config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        entrypoints: bool | Sequence[str] = False,
        surface: str = "full",
        os_name: str = "auto",
        workspace: str | os.PathLike[str] | None = None,
        session_dir: str | os.PathLike[str] | None = None,
        origin: str | None = "human",
        host: sync.Host | None = None,
        provider: str | None = None,
    ) -> CallgateSession:
        ws = Path(workspace) if workspace else tmp_path_factory.mktemp("ws")
        for rel, content in (files or {}).items():
            target = ws / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content if isinstance(content, bytes) else content.encode())
        if host is None:
            host = sync.Host.boot(
                config if config is not None else {},
                plugins=list(plugins),
                entrypoints=entrypoints,
                surface=surface,
                os=os_name,
            )
            hosts.append(host)
        show: list[str] = []
        if provider is not None:  # a native rendering: what its faces run is on the surface
            from ._host.renderings import rendering

            show = rendering(provider).shows(host.host)
        session = host.open_session(ws, session_dir=session_dir, origin=origin, show=show)
        return CallgateSession(host, session, ws)

    return factory, hosts


@pytest.fixture
def callgate_session(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., CallgateSession]]:
    """A factory of `CallgateSession`s; every host and session is closed at teardown."""
    factory, hosts = make_session_factory(tmp_path_factory)
    yield factory
    for host in hosts:
        host.close()
