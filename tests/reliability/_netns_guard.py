"""Runs inside ``unshare -n`` (only ``lo``): web_fetch with the real system resolver and the
real httpx transport against loopback spellings of a live listener and private
addresses. Prints one JSON object. Even a broken guard could not leave the namespace;
the listener counts every connection that reached it.
"""

from __future__ import annotations

import errno
import json
import socket
import tempfile
import threading

from callgate import sync

SPELLINGS = ["127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1",
             "0177.0.0.01", "127.000.000.001", "[::1]", "[::ffff:127.0.0.1]",
             "[::ffff:7f00:1]", "[0:0:0:0:0:0:0:1]", "localhost", "LOCALHOST", "localhost.",
             "127.255.255.254", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]"]
PRIVATE = ["10.0.0.1", "012.0.0.1", "167772161", "192.168.1.1", "172.16.0.1",
           "169.254.169.254", "100.64.0.1", "0.0.0.0", "0", "[fd00::1]", "[fe80::1]",
           "[::ffff:10.0.0.1]", "224.0.0.1"]


def no_route_out() -> bool:
    with socket.socket() as probe:
        probe.settimeout(2)
        try:
            probe.connect(("10.0.0.1", 80))
        except OSError as exc:
            return exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH)
    return False


def main() -> None:
    connections = []
    listener = socket.socket(socket.AF_INET6)
    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    listener.bind(("::", 0))
    listener.listen(64)
    port = listener.getsockname()[1]

    def accept() -> None:
        while True:
            conn, addr = listener.accept()
            connections.append(str(addr))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                         b"Content-Length: 2\r\nConnection: close\r\n\r\nok")
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    host = sync.Host.boot({"web": {"timeout_s": 5, "connect_timeout_s": 2}},
                          entrypoints=["web"], surface="full")
    allowed = sync.Host.boot({"web": {"timeout_s": 5, "allow_loopback": True}},
                             entrypoints=["web"], surface="full")
    results = []
    with tempfile.TemporaryDirectory() as ws:
        session = host.open_session(ws)
        for spelled in SPELLINGS + PRIVATE:
            url = f"http://{spelled}:{port}/x"
            r = session.run_batch([_call(url)])[0]
            results.append({"url": url, "fetched": not r.is_error,
                            "how": r.error.signature if r.error else None,
                            "text": r.text[:160]})
        seen = len(connections)
        control = allowed.open_session(ws).run_batch([_call(f"http://127.0.0.1:{port}/")])[0]
    host.close()
    allowed.close()
    print(json.dumps({"results": results, "connections": seen, "no_route_out": no_route_out(),
                      "control_status": 200 if control.text.startswith("status 200") else
                      control.text[:200]}))


def _call(url: str) -> object:
    from callgate import ToolCall

    return ToolCall("c", "web_fetch", {"url": url})


if __name__ == "__main__":
    main()
