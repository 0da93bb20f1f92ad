"""Runs inside a fresh network namespace (``unshare -n``): a loopback HTTP server and
``callgate replay`` against it. Prints one JSON object for the test to check.

In the namespace the only interface is ``lo``: a packet to any other address has no
route, so even a broken guard could not reach 10.0.0.1 or anything else.
"""

from __future__ import annotations

import errno
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import ClassVar

PAGE = (b"<!doctype html><html><head><title>Local docs</title></head><body>"
        b"<h1>Guide</h1><p>Read <a href='/next'>next</a>.</p></body></html>")


class Handler(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Handler.seen.append(self.path)
        if self.path == "/page":
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)
        elif self.path == "/r":
            self.send_response(302)
            self.send_header("Location", "http://10.0.0.1/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_error(404)

    def log_message(self, *args: object) -> None:
        pass


def no_route_out() -> bool:
    """True when this namespace cannot reach a non-loopback address at all."""
    with socket.socket() as probe:
        probe.settimeout(2)
        try:
            probe.connect(("10.0.0.1", 80))
        except OSError as exc:
            return exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH)
    return False


def main() -> None:
    work = Path(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    config = work / "callgate.toml"
    config.write_text("[web]\nallow_loopback = true\ntimeout_s = 10\n")
    transcript = work / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in [
        {"id": "w1", "name": "web_fetch", "arguments": {"url": f"http://127.0.0.1:{port}/page"}},
        {"id": "w2", "name": "web_fetch", "arguments": {"url": f"http://127.0.0.1:{port}/r"}},
        {"id": "i1", "name": "view_image", "arguments": {"path": "a.png"}},
    ]) + "\n")
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "web,media"}
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", str(transcript),
                           "--workspace", str(work / "ws"), "--config", str(config)],
                          capture_output=True, text=True, env=env, timeout=120)
    server.shutdown()
    print(json.dumps({"port": port, "returncode": proc.returncode, "stderr": proc.stderr,
                      "results": [json.loads(x) for x in proc.stdout.splitlines() if x.strip()],
                      "seen": Handler.seen, "no_route_out": no_route_out()}))


if __name__ == "__main__":
    main()
