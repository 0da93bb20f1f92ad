"""Running ``callgate serve --http`` as a subprocess and talking to it with the SDK's client.

`Served` starts the real command (port 0, the URL read from its stderr), with the
test's private ``$CALLGATE_HOME`` / ``$CALLGATE_CONFIG_HOME``, and stops it with SIGTERM
(then SIGKILL) on exit. `connect` opens an MCP session with the SDK's
streamable-HTTP client and reports the session id the server gave it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from .toolkit import child_env

URL_LINE = re.compile(r"serving MCP on (http://\S+)")


class Served:
    """One ``callgate serve --http`` process."""

    def __init__(
        self, args: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None
    ) -> None:
        self.args = [sys.executable, "-m", "callgate_cli", "serve", *args]
        self.env = {**os.environ, **child_env(), **(env or {})}
        self.cwd = cwd
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.log: list[str] = []

    def start(self, timeout: float = 30.0) -> Served:
        self.proc = subprocess.Popen(
            self.args,
            env=self.env,
            cwd=self.cwd,
            text=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        found = threading.Event()

        def pump() -> None:
            assert self.proc is not None and self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line)
                m = URL_LINE.search(line)
                if m and not found.is_set():
                    self.url = m.group(1)
                    found.set()
            found.set()

        threading.Thread(target=pump, daemon=True).start()
        found.wait(timeout)
        if not self.url:
            self.stop()
            raise AssertionError("serve --http did not start:\n" + "".join(self.log))
        return self

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        time.sleep(0.05)  # let the stderr pump finish
        return self.proc.returncode

    def __enter__(self) -> Served:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def run_cli(args: Sequence[str], timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """``callgate serve ARGS`` run to its end (for usage errors)."""
    return subprocess.run(
        [sys.executable, "-m", "callgate_cli", "serve", *args],
        env={**os.environ, **child_env()},
        text=True,
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


class Opened:
    """What `connect` yields: the client session and the MCP session id the server gave."""

    def __init__(self, client: ClientSession, ids: list[str]) -> None:
        self.client = client
        self._ids = ids

    @property
    def session_id(self) -> str:
        return self._ids[-1]


@contextlib.asynccontextmanager
async def connect(
    url: str,
    *,
    token: str | None = None,
    session_id: str | None = None,
    terminate_on_close: bool = True,
) -> AsyncIterator[Opened]:
    """An initialized MCP client session on ``url`` (``session_id`` presents an old one)."""
    headers: dict[str, str] = {}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    ids: list[str] = []

    async def seen(response: httpx2.Response) -> None:
        sid = response.headers.get("mcp-session-id")
        if sid and (not ids or ids[-1] != sid):
            ids.append(sid)

    timeout = httpx2.Timeout(30.0, read=120.0)
    async with (
        httpx2.AsyncClient(
            headers=headers, timeout=timeout, event_hooks={"response": [seen]}
        ) as http,
        streamable_http_client(url, http_client=http, terminate_on_close=terminate_on_close) as (
            read,
            write,
        ),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield Opened(client, ids)


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx2.Response:
    """One raw JSON-RPC POST (no MCP client), for what a client library would not send."""
    hdrs = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        **(headers or {}),
    }
    return httpx2.post(url, json=body, headers=hdrs, timeout=30.0)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


class CuttingProxy:
    """A loopback TCP proxy in front of a server that drops the first connection whose
    request is a ``tools/call`` as soon as the server's first SSE event (the priming event,
    with its id) has passed: a client's POST stream lost mid-call. Everything else is
    forwarded as it is."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.cuts = 0
        self._listener: Any = None

    async def start(self, tasks: Any) -> CuttingProxy:
        import anyio

        self._listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        self.port = self._listener.extra(anyio.abc.SocketAttribute.local_port)
        tasks.start_soon(self._listener.serve, self._connection)
        return self

    async def _connection(self, client: Any) -> None:
        import anyio

        async with client, await anyio.connect_tcp("127.0.0.1", self.target_port) as server:
            request = bytearray()
            cut = anyio.Event()

            async def upstream() -> None:
                try:
                    async for chunk in client:
                        request.extend(chunk[:65536])
                        await server.send(chunk)
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
                cut.set()

            async def downstream() -> None:
                answer = bytearray()
                try:
                    async for chunk in server:
                        await client.send(chunk)
                        answer.extend(chunk)
                        if (not self.cuts and b'"tools/call"' in request
                                and b"text/event-stream" in answer and b"\nretry:" in answer):
                            self.cuts += 1
                            break
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
                cut.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(upstream)
                tg.start_soon(downstream)
                await cut.wait()
                tg.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def connect_modern(
    url: str,
    *,
    token: str | None = None,
    name: str = "modern-test",
    elicit: Any = None,
) -> AsyncIterator[Any]:
    """An SDK ``Client`` pinned to the 2026-07-28 protocol (no handshake, no session id)."""
    import mcp_types as types
    from mcp import Client

    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    timeout = httpx2.Timeout(30.0, read=120.0)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="2026-07-28", elicitation_callback=elicit,
                          client_info=types.Implementation(name=name, version="1")) as client:
            yield client
