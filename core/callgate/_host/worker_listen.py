"""``callgate worker --workspace DIR --listen HOST:PORT``: the executor protocol served over
a websocket, to hosts that present the bearer token (issue 37, `_executor.websocket`).

The token comes from ``--token-file FILE`` or from the variable ``--token-env NAME`` names,
never from the argv (every user of the machine can read a process's argv). The upgrade
request of a connection must carry ``Authorization: Bearer TOKEN``; any other is answered
401 before a `Worker` exists for it, so nothing it sends is ever read. Each accepted
connection is one host's stream of the protocol, served by a `Worker` of its own exactly
as stdio is (one message per text frame); when it closes, that host's sessions end (their
jobs and programs with them). The worker keeps listening until it is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import os
import sys
from typing import Any

from .._executor.remote import LINE_LIMIT
from .._executor.websocket import token_matches
from .worker import Worker


class SocketOutput:
    """The protocol's output to one websocket: whole lines from any thread, each sent as
    one text message, in order."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    def write(self, data: bytes) -> None:
        self._loop.call_soon_threadsafe(self.queue.put_nowait, data)

    def end(self) -> None:
        self._loop.call_soon_threadsafe(self.queue.put_nowait, None)


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6); `ValueError` says what is wrong."""
    host, sep, port = value.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen takes HOST:PORT (127.0.0.1:8770), not {value!r}")
    return host, int(port)


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def _serve_connection(socket: Any, workspace: str) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    out = SocketOutput(loop)
    worker = Worker(workspace, out)  # type: ignore[arg-type]  # any object with write()

    async def send() -> None:
        while (data := await out.queue.get()) is not None:
            await socket.send(data.rstrip(b"\n").decode("ascii"))

    async def receive() -> None:
        try:
            async for message in socket:
                data = message.encode() if isinstance(message, str) else bytes(message)
                reader.feed_data(data + b"\n")
        except Exception:  # a dropped connection ends the stream as a closed one does
            pass
        finally:
            reader.feed_eof()

    sender = loop.create_task(send())
    receiver = loop.create_task(receive())
    try:
        await worker.serve(reader)  # until the host closes: then its sessions end
    finally:
        out.end()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(sender, 5.0)
        receiver.cancel()


async def listen(workspace: str, address: tuple[str, int], token: str, ready: Any = None) -> None:
    """Serve ``workspace`` on ``address`` until cancelled. ``ready(url)`` is called once
    the socket listens (its port chosen, for ``:0``)."""
    from websockets.asyncio.server import serve as ws_serve

    def check(connection: Any, request: Any) -> Any:
        if token_matches(request.headers.get("Authorization"), token):
            return None
        response = connection.respond(
            http.HTTPStatus.UNAUTHORIZED, "a bearer token this worker accepts is required\n"
        )
        response.headers["WWW-Authenticate"] = "Bearer"
        return response

    async def handler(socket: Any) -> None:
        await _serve_connection(socket, workspace)

    host, port = address
    async with ws_serve(
        handler,
        host,
        port,
        process_request=check,
        max_size=LINE_LIMIT,
        compression=None,
    ) as server:
        bound = next(iter(server.sockets)).getsockname()
        where = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        if ready is not None:
            ready(f"ws://{where}:{bound[1]}")
        await server.serve_forever()


def serve_listening(
    workspace: str, listen: str, token_file: str | None, token_env: str | None
) -> int:
    """``callgate worker --listen HOST:PORT``: read the token, then listen until stopped.
    `ValueError` says what is wrong with the options (nothing listens then)."""
    from .._executor.websocket import TokenError, read_token

    address = parse_address(listen)
    try:
        token = read_token(token_file, token_env)
    except TokenError as exc:
        raise ValueError(
            f"--listen needs a bearer token from --token-file FILE or --token-env NAME: {exc}"
        ) from None
    try:
        import websockets  # noqa: F401
    except ImportError:
        raise ValueError(
            '--listen needs the websockets library: pip install "callgate[websocket]"'
        ) from None
    try:
        return serve(workspace, address, token)
    except OSError as exc:
        raise ValueError(f"cannot listen on {listen}: {exc.strerror or exc}") from None


def serve(workspace: str, where: tuple[str, int], token: str) -> int:
    """Listen until stopped; the URL is printed on stderr once the socket is bound."""
    os.dup2(2, 1)  # whatever prints goes to stderr, as on stdio
    sys.stdout = sys.stderr

    def ready(url: str) -> None:
        print(f"callgate worker: listening on {url}", file=sys.stderr, flush=True)
        if not _loopback(where[0]):
            print(
                "callgate worker: plain ws:// off loopback carries the token and every "
                "file in the clear: put a TLS terminator (wss://) or an ssh tunnel in front",
                file=sys.stderr,
                flush=True,
            )

    async def main() -> None:
        import signal

        task = asyncio.current_task()
        assert task is not None
        # stopped: close every connection, so each host's sessions end with their jobs
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                asyncio.get_running_loop().add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await listen(workspace, where, token, ready)

    asyncio.run(main())
    return 0


__all__ = ["SocketOutput", "listen", "parse_address", "serve", "serve_listening"]
