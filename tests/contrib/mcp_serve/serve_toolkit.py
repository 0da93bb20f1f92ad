"""Run ``callgate serve``'s stdio server with the test-only `Toolkit` (a subprocess for tests).

``python serve_toolkit.py WORKSPACE MARKER [CONFIG_JSON]``: like ``callgate serve``
but with the toolkit's tools instead of the installed plugins. The toolkit writes
MARKER when the session ends and MARKER.pids for every process it spawned; this
script writes MARKER.server with its own pid.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from callgate import Host
from callgate_mcp_serve import CallgateMCP, ElicitationApprover, serve_stdio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from toolkit import Toolkit


def main() -> None:
    workspace, marker = sys.argv[1], sys.argv[2]
    config = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    with open(marker + ".server", "w", encoding="utf-8") as fh:
        fh.write(str(os.getpid()))
    host = Host.boot(config, plugins=[Toolkit(marker), ElicitationApprover()], entrypoints=False)
    anyio.run(serve_stdio, CallgateMCP(host, workspace))


if __name__ == "__main__":
    main()
