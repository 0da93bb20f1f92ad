"""The executor protocol over a websocket, with a bearer token (issue 37).

A worker started as ``callgate worker --workspace DIR --listen HOST:PORT`` (its token read
from ``--token-file FILE`` or the variable ``--token-env NAME`` names: never from its
argv, which every user of the machine can read) accepts websocket connections that
present ``Authorization: Bearer TOKEN``; any other is answered 401 before the protocol
starts, so no tool can run for it. Each connection is one host's stream of the protocol,
exactly as a worker's stdio is: one JSON-RPC message per text frame.

The host side is `SocketLink`: ``[executor] url = "ws://HOST:PORT"`` with ``token_file``
or ``token_env`` in the user config (all user-only: a workspace that could set them could
send its session's tools, and the token, anywhere). A `SocketConnection` is a
`remote.Connection` whose pipes are the websocket's messages, so calls, progress, cancels
and a worker that goes away behave exactly as over stdio. The ``websockets`` library
(``pip install "callgate[websocket]"``) is imported only when a session uses one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from .remote import LINE_LIMIT, Connection, Link, WorkerUnavailable, _deadline

if TYPE_CHECKING:
    from .._pipeline.view import SessionView

#: the shortest token accepted (a shorter one is guessable)
MIN_TOKEN_CHARS = 16
#: seconds the websocket closing handshake may take
CLOSE_TIMEOUT_S = 3.0


class TokenError(ValueError):
    """A token source is missing, unreadable, or holds no usable token."""


def read_token(
    token_file: str | None, token_env: str | None, environ: Mapping[str, str] | None = None
) -> str:
    """The bearer token from exactly one source: the first line of ``token_file`` that is
    neither blank nor a ``#`` comment, or the value of the variable ``token_env``
    (`TokenError` says what is wrong, never the token)."""
    if token_file is None and token_env is None:
        raise TokenError("no token source: give a token file or an environment variable's name")
    if token_file is not None and token_env is not None:
        raise TokenError("give the token as a file or as an environment variable's name, not both")
    if token_file is not None:
        try:
            with open(os.path.expanduser(token_file), encoding="utf-8") as fh:
                lines = [line.strip() for line in fh]
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenError(f"token file {token_file}: {exc}") from None
        found = next((line for line in lines if line and not line.startswith("#")), "")
        where = f"token file {token_file}"
    else:
        assert token_env is not None
        found = (os.environ if environ is None else environ).get(token_env, "").strip()
        where = f"${token_env}"
    if not found:
        raise TokenError(f"{where} holds no token")
    if len(found) < MIN_TOKEN_CHARS or any(c.isspace() for c in found):
        raise TokenError(
            f"the token in {where} must be at least {MIN_TOKEN_CHARS} characters, with no "
            "spaces (a short token is guessable)"
        )
    return found


def token_matches(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header presents ``token`` (compared in constant time)."""
    scheme, _, given = (header or "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


def check_url(url: str) -> str:
    if not url.startswith(("ws://", "wss://")):
        raise ValueError(f"an executor url is ws://HOST:PORT or wss://HOST:PORT, not {url!r}")
    return url


class _SocketInput:
    """What the connection writes to: each protocol line becomes one text message."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.closed:
            raise ConnectionResetError("the worker's websocket is closed")
        self.queue.put_nowait(data)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)


class _NoOutput:
    """A websocket worker has no stderr to quote."""

    async def read(self, _n: int) -> bytes:
        return b""


class SocketPipes:
    """A websocket presented as the pipes `remote.Connection` reads and writes: its input
    a queue of lines sent as messages, its output a stream of the messages received (one
    line each), its end the websocket's close."""

    pid: int | None = None

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.stdin = _SocketInput()
        self.stdout = asyncio.StreamReader(limit=LINE_LIMIT)
        self.stderr = _NoOutput()
        self.closed = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._send()), loop.create_task(self._receive())]

    async def _send(self) -> None:
        try:
            while (data := await self.stdin.queue.get()) is not None:
                await self.socket.send(data.rstrip(b"\n").decode("ascii"))
        except Exception:  # the socket closed under us: the reader reports it
            self.stdin.closed = True
        with contextlib.suppress(Exception), _deadline(CLOSE_TIMEOUT_S):
            await self.socket.close()

    async def _receive(self) -> None:
        try:
            async for message in self.socket:
                data = message.encode() if isinstance(message, str) else bytes(message)
                self.stdout.feed_data(data + b"\n")
        except Exception:  # a dropped connection ends the stream as a closed one does
            pass
        finally:
            self.stdin.close()  # the sender ends (closing its side) and refuses more lines
            self.stdout.feed_eof()
            self.closed.set()

    async def wait(self) -> None:
        """Until the websocket is closed (a socket has no exit status)."""
        await self.closed.wait()


class SocketConnection(Connection):
    """A worker reached at a websocket URL with a bearer token."""

    def __init__(self, url: str, token_file: str | None, token_env: str | None) -> None:
        super().__init__([url])
        self.url = url
        self._token_source = (token_file, token_env)

    async def _start(self, owner: SessionView, timeout: float) -> None:
        try:
            from websockets.asyncio.client import connect
            from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI
        except ImportError:
            raise WorkerUnavailable(
                'an executor url needs the websockets library: pip install "callgate[websocket]"'
            ) from None
        try:
            token = read_token(*self._token_source)
        except TokenError as exc:
            raise WorkerUnavailable(f"no worker was reached at {self.url}: {exc}") from None
        try:
            with _deadline(timeout):
                socket = await connect(
                    self.url,
                    additional_headers={"Authorization": f"Bearer {token}"},
                    max_size=LINE_LIMIT,
                    compression=None,
                    proxy=None,  # never a proxy from the environment: the token goes here only
                    open_timeout=None,
                    close_timeout=CLOSE_TIMEOUT_S,
                )
        except InvalidStatus as exc:
            status = exc.response.status_code
            why = "refused this host's token" if status in (401, 403) else "refused the connection"
            raise WorkerUnavailable(f"the worker at {self.url} {why} (HTTP {status})") from None
        except TimeoutError:
            raise WorkerUnavailable(
                f"the worker at {self.url} did not answer within {timeout:g} s"
            ) from None
        except (OSError, InvalidHandshake, InvalidURI) as exc:
            raise WorkerUnavailable(f"the worker at {self.url} cannot be reached: {exc}") from None
        pipes = SocketPipes(socket)
        self._proc = cast(Any, pipes)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._read())]

    async def close(self) -> None:
        """Close the websocket (the worker ends this host's sessions) and wait for it."""
        proc = cast("SocketPipes | None", self._proc)
        if proc is None:
            return
        if self.gone is None:
            self.gone = "the session closed its worker"
        proc.stdin.close()
        with contextlib.suppress(TimeoutError), _deadline(CLOSE_TIMEOUT_S + 1.0):
            await proc.wait()
        for task in self._tasks:
            task.cancel()


class SocketLink(Link):
    """The worker a session family shares, at a websocket URL."""

    def __init__(
        self, url: str, token_file: str | None, token_env: str | None, connect_timeout: float
    ) -> None:
        super().__init__([check_url(url)], connect_timeout)
        self.url = url
        self.token_file = token_file
        self.token_env = token_env

    def new_connection(self, owner: SessionView) -> Connection:
        return SocketConnection(self.url, self.token_file, self.token_env)


__all__ = [
    "MIN_TOKEN_CHARS",
    "SocketConnection",
    "SocketLink",
    "SocketPipes",
    "TokenError",
    "check_url",
    "read_token",
    "token_matches",
]
