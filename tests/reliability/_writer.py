"""A writer zygote for the atomicity figure: imports callgate once, then forks one writer
per request, so 200 kill -9 runs do not pay 200 interpreter starts.

Protocol (one JSON object per line): the parent writes ``{"ws", "file", "tool"}`` to
stdin; the zygote forks a writer and answers ``{"ready": pid, "publisher": pid}`` once
the writer has read the file through its own host (``publisher``: the process that
publishes, the writer itself or its session's worker), then ``{"exit": pid, "status": n}`` once the
parent has killed it (the zygote reaps it, so its pid is really gone: a zombie would
still look alive to the stale-temp sweep). The writer publishes version after version
of the file with ``write_file``, ``edit_file`` or ``multi_edit`` until it is killed.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import callgate_files
from callgate import Host, ToolCall

BODY_LINES = 20_000  # ~1.1 MiB per version: each publish takes a few milliseconds


BODY = "".join(f"line {i:06d} of the body, the same in every version\n"
               for i in range(BODY_LINES))


def content(k: int, tail: int | None = None) -> str:
    """Version ``k``: a header and a tail naming it (edit_file moves only the tail)."""
    return f"version {k:08d}\n{BODY}tail {k if tail is None else tail:08d}\n"


def versions_in(data: bytes) -> tuple[int, int] | None:
    """The (header, tail) numbers of a whole version, or ``None`` for anything else."""
    head, _, rest = data.partition(b"\n")
    _, _, last = rest[:-1].rpartition(b"\n")
    try:
        h, t = int(head.removeprefix(b"version ")), int(last.removeprefix(b"tail "))
    except ValueError:
        return None
    return (h, t) if data == content(h, t).encode() else None


def call_for(tool: str, rel: str, k: int) -> ToolCall:
    old, new = f"{k - 1:08d}", f"{k:08d}"
    if tool == "write_file":
        return ToolCall(f"w{k}", "write_file", {"path": rel, "content": content(k)})
    if tool == "edit_file":
        return ToolCall(f"e{k}", "edit_file", {"path": rel, "old_string": f"tail {old}",
                                                "new_string": f"tail {new}"})
    return ToolCall(f"m{k}", "multi_edit", {"path": rel, "edits": [
        {"old_string": f"version {old}", "new_string": f"version {new}"},
        {"old_string": f"tail {old}", "new_string": f"tail {new}"}]})


async def write_forever(ws: str, rel: str, tool: str, ready: int) -> None:
    host = Host.boot({"files": {"watch": False}}, plugins=[callgate_files], entrypoints=False)
    session = host.open_session(ws)
    read = await session.run(ToolCall("r", "read_file", {"path": rel, "limit": 1}))
    assert not read.is_error, read.text
    with open(os.path.join(ws, rel), "rb") as fh:
        found = versions_in(fh.read())
    assert found is not None, "the writer found no whole version to start from"
    k = max(found)
    if found != (k, k):  # an edit_file run moved only the tail: bring the header along
        await session.run(ToolCall("h", "write_file", {"path": rel, "content": content(k)}))
    os.write(ready, b"r%d" % publisher(session))
    while True:
        k += 1
        result = await session.run(call_for(tool, rel, k))
        if result.is_error:
            raise SystemExit(f"the writer's {tool} failed: {result.text}")


def publisher(session: Any) -> int:
    """The pid of the process that publishes this writer's versions: this one, or, when
    the user config binds sessions to a worker (``pytest --executor=bwrap-worker``), the
    worker's (from its handshake): the process a kill mid-publish must hit."""
    link = getattr(session.executor, "link", None)
    connection = getattr(link, "connection", None)
    if connection is not None:
        return int(connection.handshake["pid"])
    return os.getpid()


def main() -> None:
    for line in sys.stdin:
        job = json.loads(line)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                anyio.run(write_forever, job["ws"], job["file"], job["tool"], w)
            finally:
                os._exit(3)
        os.close(w)
        got = os.read(r, 64)
        os.close(r)
        print(json.dumps({"ready": pid, "publisher": int(got[1:])} if got else
                         {"failed": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"exit": pid, "status": status}), flush=True)


if __name__ == "__main__":
    main()
