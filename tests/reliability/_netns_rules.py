"""Runs inside ``unshare -n`` (only ``lo``): web_fetch URL rules against spellings that
used to slip past them, redirects into denied URLs, and the two IPv6 blocks that carry
an IPv4 address. A loopback listener records every request (path and Host header), so a
rule that let one through is counted where it matters. Prints one JSON object.
"""

from __future__ import annotations

import errno
import json
import socket
import sys
import tempfile
import threading
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from callgate import Decision, ToolCall, hookimpl, sync

SEEN: list[tuple[str, str]] = []


def serve(listener: socket.socket) -> None:
    while True:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            head = data.decode("latin-1").split("\r\n")
            path = head[0].split(" ")[1] if head and " " in head[0] else "?"
            host = next((h.split(":", 1)[1].strip() for h in head[1:]
                         if h.lower().startswith("host:")), "")
            SEEN.append((path, host))
            query = urlsplit(path).query
            if path.startswith("/r?") and query.startswith("to="):
                target = unquote(query[3:])
                conn.sendall(f"HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0"
                             "\r\nConnection: close\r\n\r\n".encode())
                continue
            body = b"SECRET" if "secret" in unquote(urlsplit(path).path) else b"public"
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)


class Approver:
    """Approves every ask (so an ask that reaches it is visible), recording each."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any,
                                preview: Any) -> Decision:
        self.asked.append(call.arguments.get("url", ""))
        return Decision("allow", reason="test")


def no_route_out() -> bool:
    with socket.socket() as probe:
        probe.settimeout(2)
        try:
            probe.connect(("10.0.0.1", 80))
        except OSError as exc:
            return exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH)
    return False


def cases(port: int) -> dict[str, list[str]]:
    base = f"http://127.0.0.1:{port}"

    def via(target: str) -> str:
        return f"{base}/r?to={quote(target, safe='')}"

    return {
        "rule bypass": [
            f"{base}//secret", f"{base}///secret", f"{base}/./secret", f"{base}/%73ecret",
            f"{base}/%73%65%63%72%65%74", f"{base}/public/../secret",
            f"{base}/public/%2e%2e/secret", f"{base}/public/%2E%2E/%73ecret",
            f"HTTP://127.0.0.1:{port}/secret", f"http://127.0.0.1:0{port}/secret",
            f"http://127.0.0.1:00{port}/secret", f"http://0x7f.1:{port}/secret",
            f"http://0x7f000001:{port}/secret", f"http://2130706433:{port}/secret",
            f"http://127.1:{port}/secret", f"http://0177.0.0.1:{port}/secret",
            f"http://[::ffff:127.0.0.1]:{port}/secret", f"http://[::ffff:7f00:1]:{port}/secret",
            f"{base}/secret#frag", f"{base}/secret?x=1",
            f"http://localhost:{port}/public", f"http://localhost.:{port}/public",
            f"http://LocalHost:{port}/public", f"http://localhost.:{port}//public",
        ],
        "redirect": [
            via("/secret"), via(f"{base}/secret"), via(f"http://0x7f.1:{port}/%73ecret"),
            via(f"{base}//secret"), via(via("/secret")), via(f"http://localhost:{port}/public"),
            via(f"http://localhost.:{port}/public"), via("/askme"),
        ],
        "ipv6 blocks": [
            f"http://[::127.0.0.1]:{port}/public", f"http://[::7f00:1]:{port}/public",
            f"http://[::ffff:0:7f00:1]:{port}/public",
            f"http://[::ffff:0:127.0.0.1]:{port}/public",
        ],
        "control": [f"{base}/public", via("/public"), f"{base}/askme"],
    }


def main() -> None:
    listener = socket.socket(socket.AF_INET6)
    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    listener.bind(("::", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    threading.Thread(target=serve, args=(listener,), daemon=True).start()
    approver = Approver()
    config = {
        "web": {"timeout_s": 5, "connect_timeout_s": 2, "allow_loopback": True},
        "permissions": {"deny": [f"web_fetch(http://127.0.0.1:{port}/secret*)",
                                 "web_fetch(domain:localhost)"],
                        "ask": [f"web_fetch(http://127.0.0.1:{port}/askme*)"]},
    }
    host = sync.Host.boot(config, entrypoints=["web"], surface="full",
                          plugins=[("approver", approver)])
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as ws:
        session = host.open_session(ws)
        for group, urls in cases(port).items():
            out = results.setdefault(group, [])
            for url in urls:
                before = len(SEEN)
                r = session.run_batch([ToolCall("c", "web_fetch", {"url": url})])[0]
                out.append({"url": url, "fetched": not r.is_error,
                            "how": r.error.signature if r.error else None,
                            "secret": "SECRET" in r.text, "requests": SEEN[before:],
                            "text": r.text[:200]})
        session.close()
    host.close()
    secret_hits = [s for s in SEEN if "secret" in unquote(urlsplit(s[0]).path)]
    localhost_hits = [s for s in SEEN if s[1].lower().startswith("localhost")]
    print(json.dumps({"results": results, "secret_requests": len(secret_hits),
                      "localhost_requests": len(localhost_hits), "all_requests": len(SEEN),
                      "asked": approver.asked, "no_route_out": no_route_out()}))


if __name__ == "__main__":
    sys.exit(main())
