"""A second process for the concurrency test: boots a host with the memory plugin, waits
for the go file, then remembers facts through the pipeline (for each i: a new fact
``PREFIX-i`` and an update of the shared fact ``counter``; then a fact claiming one
subject_key) and prints each result as JSON.

Usage: python _writer.py WORKSPACE PREFIX COUNT GO_FILE
"""

from __future__ import annotations

import json
import os
import sys
import time

import callgate_memory
from callgate import ToolCall, sync


def main() -> None:
    workspace, prefix, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    host = sync.Host.boot({}, plugins=[callgate_memory], entrypoints=False, surface="full")
    session = host.open_session(workspace)
    calls = []
    for i in range(count):
        calls.append(ToolCall(f"{prefix}{i}", "remember", {
            "name": f"{prefix}-{i}", "description": f"{prefix} fact {i}", "body": "x"}))
        calls.append(ToolCall(f"{prefix}{i}-bump", "remember", {
            "name": "counter", "description": "shared", "body": f"{prefix} {i}"}))
    calls.append(ToolCall(f"{prefix}-key", "remember", {
        "name": f"{prefix}-owner", "description": "owner", "body": prefix,
        "subject_key": "release.owner"}))
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.001)
    for call in calls:
        [result] = session.run_batch([call])
        print(json.dumps({"id": call.id, "is_error": result.is_error,
                          "signature": result.error.signature if result.error else None,
                          "text": result.text}), flush=True)
    session.close()
    host.close()


if __name__ == "__main__":
    main()
