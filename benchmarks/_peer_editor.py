"""Runs inside the peers venv: openhands-aci's editor, driven by JSON lines on stdin.

First line out: ``{"ok": true, "version": ...}`` or ``{"ok": false, "error": ...}``.
Then, per request ``{"op": "str_replace", "path", "old", "new"}``, one line
``{"ok", "seconds", "error"}`` where ``seconds`` times the editor call alone.
Only the standard library and openhands-aci are imported here.
"""

from __future__ import annotations

import json
import logging
import sys
import time


def main() -> int:
    try:
        from importlib.metadata import version

        from openhands_aci.editor.editor import OHEditor
    except Exception as exc:  # report, do not crash: the caller skips the row
        print(json.dumps({"ok": False, "error": f"openhands-aci unavailable: "
                                                f"{type(exc).__name__}: {exc}"}), flush=True)
        return 0
    # openhands-aci logs every file check at DEBUG level to stderr; silence that so the
    # timing covers the edit, not a terminal (its best case)
    logging.disable(logging.INFO)
    editor = OHEditor()  # its default limit (10 MB) is part of what is compared
    print(json.dumps({"ok": True, "version": version("openhands-aci")}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        started = time.perf_counter()
        try:
            editor(command="str_replace", path=request["path"], old_str=request["old"],
                   new_str=request["new"])
            reply = {"ok": True, "seconds": time.perf_counter() - started, "error": None}
        except Exception as exc:
            reply = {"ok": False, "seconds": time.perf_counter() - started,
                     "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
