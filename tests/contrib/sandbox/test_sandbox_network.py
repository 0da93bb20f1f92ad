"""The network through the full pipeline: a loopback HTTP server on the host is unreachable
from a sandboxed command with ``network = false`` (with the hint naming the key) and
reachable with ``network = true``."""

from __future__ import annotations

import http.server
import os
import sys
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest

from .sandbox_helpers import needs_bwrap

pytestmark = needs_bwrap


class Handler(http.server.BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Handler.requests.append(self.path)
        body = b"hello from the host\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    Handler.requests = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/probe"
    httpd.shutdown()
    httpd.server_close()


def fetch(url: str) -> str:
    code = ("import sys, urllib.request; "
            "sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())")
    # The base interpreter, not the venv's: a venv under /tmp is hidden by the sandbox's
    # private /tmp, and this script needs only the standard library.
    python = os.path.realpath(sys.executable)
    return f"{python} -I -c '{code}' {url}"


def test_the_hosts_loopback_server_is_unreachable_without_network(sandboxed, server):
    s = sandboxed(sandbox={"network": False})
    r = s.call("bash", {"command": fetch(server)})
    assert r.is_error and "Connection refused" in r.text
    assert ("[note: the sandbox has no network, so connections fail (the host's loopback "
            "and Unix sockets included); set [sandbox] network = true to allow them]"
            ) in r.text.splitlines()
    assert Handler.requests == []


def test_the_hosts_loopback_server_is_reachable_with_network(sandboxed, server):
    s = sandboxed(sandbox={"network": True})
    r = s.call("bash", {"command": fetch(server)})
    assert r.text == "hello from the host\n[exit code 0]" and not r.is_error
    assert Handler.requests == ["/probe"]


def test_a_connection_refused_with_the_network_on_gets_no_hint(sandboxed):
    s = sandboxed(sandbox={"network": True})
    r = s.call("bash", {"command": fetch("http://127.0.0.1:9/closed")})
    assert r.is_error and "Connection refused" in r.text and "[note:" not in r.text
