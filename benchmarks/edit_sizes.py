"""One unique replacement in files of 1 KiB ... 50 MiB: plain Python, edit_file, openhands-aci.

For every size, in one run and interleaved per repetition (so load drift hits
all three alike), each contender edits its own copy of the same generated file
(Python-like lines, one unique marker in the middle), flipping the marker
between two values so every edit really changes the file:

- plain Python: read bytes, decode, ``str.replace(old, new, 1)``, encode, write a
  temp file beside it, fsync, ``os.replace`` (the floor an atomic edit cannot beat);
- the same plus an fsync of the directory after the rename (what makes the rename
  durable; callgate's atomic publish does it too);
- callgate ``edit_file`` through the whole pipeline (gate, writer lease,
  observation check, matching, diff, atomic publish, ledger update; the file is
  read once beforehand, as the contract requires), awaited on the async session
  as an agent host would (the sync facade's thread hop is not counted);
- openhands-aci's editor ``str_replace`` (OHEditor, its defaults), in its own
  venv, timed inside its process: it refuses files over 10 MiB (a capability
  difference, reported as such).

Targets (issue 11): edit_file <= 1.5x plain; faster than openhands-aci.

    uv run --group bench python benchmarks/edit_sizes.py [--sizes 1K,1M,50M] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgate_files
from _peers import PeerEditor, ensure_peers
from _plain import plain_edit
from _timing import ratio, summary
from callgate import Host, ToolCall
from callgate.host import Session

MARKERS = ("MARKER_ALPHA = 1", "MARKER_BETA = 2")
DEFAULT_SIZES = "1K,64K,1M,8M,50M"
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    text = text.strip().upper()
    if text[-1:] in UNITS:
        return int(float(text[:-1]) * UNITS[text[-1]])
    return int(text)


def label(size: int) -> str:
    for unit in ("G", "M", "K"):
        if size >= UNITS[unit] and size % UNITS[unit] == 0:
            return f"{size // UNITS[unit]} {unit}iB"
    return f"{size} B"


def generate(path: str, size: int) -> None:
    """``size`` bytes (to a line) of Python-like lines with one marker line in the middle."""
    line = b"    value_%07d = compute(%d)  # filler to make the file big\n"
    lines = [line % (i, i) for i in range(max(1, size // len(line % (0, 0))) + 2)]
    body = b"".join(lines)
    half = max(0, (size - len(MARKERS[0]) - 1) // 2)
    head = body[:half]
    head = head[: head.rfind(b"\n") + 1]
    tail = body[len(head): len(head) + (size - len(head) - len(MARKERS[0]) - 1)]
    tail = tail[: tail.rfind(b"\n") + 1]
    with open(path, "wb") as fh:
        fh.write(head + MARKERS[0].encode() + b"\n" + tail)


def repetitions(size: int, scale: float) -> int:
    base = 40 if size <= 64 << 10 else 15 if size <= 2 << 20 else 5
    return max(2, int(base * scale))


def run(sizes: str = DEFAULT_SIZES, scale: float = 1.0, peers: bool = True,
        install_peers: bool = True, directory: str | None = None,
        peer_python: str | None = None) -> dict[str, Any]:
    """``peer_python`` runs the openhands-aci worker under that interpreter instead of the
    peers venv (the smoke test uses this one, where the worker reports the editor absent)."""
    wanted = [parse_size(s) for s in sizes.split(",") if s.strip()]
    tmp = tempfile.mkdtemp(prefix="callgate-bench-edit-", dir=directory)
    report: dict[str, Any] = {"rows": [], "targets": {"edit_vs_plain_max": 1.5,
                                                      "edit_vs_openhands_max": 1.0}}
    reason = ""
    if peer_python is None:
        peer_python, reason = ensure_peers(install_peers) if peers else (None, "not asked for")
    report["openhands_aci"] = {"available": peer_python is not None, "reason": reason}
    host = Host.boot({"files": {"watch": False}}, plugins=[callgate_files],
                     entrypoints=False, surface="full")
    editor: PeerEditor | None = None
    try:
        if shutil.disk_usage(tmp).free < max(wanted) * 8:
            raise SystemExit(f"not enough free disk in {tmp} for {label(max(wanted))} files")
        if peer_python:
            try:
                editor = PeerEditor(peer_python)
                report["openhands_aci"]["version"] = editor.version
            except RuntimeError as exc:
                report["openhands_aci"].update(available=False, reason=str(exc))

        async def all_sizes() -> None:
            async with host.open_session(tmp) as session:
                for size in wanted:
                    report["rows"].append(await _one_size(session, editor, tmp, size,
                                                          repetitions(size, scale)))

        asyncio.run(all_sizes())
    finally:
        if editor is not None:
            editor.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return report


async def _one_size(session: Session, editor: PeerEditor | None, tmp: str, size: int,
                    reps: int) -> dict[str, Any]:
    """One size: the baselines block the loop thread while they run, which is fine: the
    session has nothing else to do, and each contender is timed on its own."""
    names = {k: f"{k}_{size}.py" for k in ("plain", "plain_dirsync", "callgate", "openhands")}
    first = os.path.join(tmp, names["plain"])
    generate(first, size)
    for key in ("plain_dirsync", "callgate", "openhands"):
        shutil.copyfile(first, os.path.join(tmp, names[key]))
    seen = await session.run(ToolCall("r", "read_file", {"path": names["callgate"], "limit": 1}))
    if seen.is_error:
        raise SystemExit(seen.text)
    times: dict[str, list[float]] = {"plain": [], "plain_dirsync": [], "callgate": [],
                                     "openhands": []}
    refusal = None
    for k in range(reps + 1):  # the first round is the warm-up
        old, new = MARKERS[k % 2], MARKERS[(k + 1) % 2]
        started = time.perf_counter()
        plain_edit(os.path.join(tmp, names["plain"]), old, new)
        plain_s = time.perf_counter() - started
        started = time.perf_counter()
        plain_edit(os.path.join(tmp, names["plain_dirsync"]), old, new, sync_dir=True)
        dirsync_s = time.perf_counter() - started
        started = time.perf_counter()
        result = await session.run(ToolCall(f"e{k}", "edit_file", {
            "path": names["callgate"], "old_string": old, "new_string": new}))
        ours_s = time.perf_counter() - started
        if result.is_error:
            raise SystemExit(f"edit_file failed on {label(size)}: {result.text[:300]}")
        peer_s = None
        if editor is not None and refusal is None:
            reply = editor.str_replace(os.path.join(tmp, names["openhands"]), old, new)
            if reply["ok"]:
                peer_s = reply["seconds"]
            else:
                refusal = reply["error"]
        if k:
            times["plain"].append(plain_s)
            times["plain_dirsync"].append(dirsync_s)
            times["callgate"].append(ours_s)
            if peer_s is not None:
                times["openhands"].append(peer_s)
    row: dict[str, Any] = {"size": size, "label": label(size), "repetitions": reps,
                           "plain": summary(times["plain"]),
                           "plain_dirsync": summary(times["plain_dirsync"]),
                           "callgate": summary(times["callgate"])}
    row["edit_vs_plain"] = ratio(row["callgate"], row["plain"])
    row["edit_vs_plain_dirsync"] = ratio(row["callgate"], row["plain_dirsync"])
    if times["openhands"]:
        row["openhands"] = summary(times["openhands"])
        row["edit_vs_openhands"] = ratio(row["callgate"], row["openhands"])
    elif editor is not None:
        row["openhands_refused"] = refusal
    for name in names.values():
        os.unlink(os.path.join(tmp, name))
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="comma list: 1K,64K,1M,50M")
    parser.add_argument("--scale", type=float, default=1.0, help="repetitions multiplier")
    parser.add_argument("--no-peers", action="store_true", help="skip openhands-aci")
    parser.add_argument("--dir", default=None, help="where to generate the files")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.sizes, args.scale, not args.no_peers, True, args.dir)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"openhands-aci: {result['openhands_aci']}")
    for row in result["rows"]:
        peer = (f"openhands {row['openhands']['median']:8.2f} ms" if "openhands" in row
                else f"openhands: {row.get('openhands_refused', 'skipped')}")
        print(f"{row['label']:>8}: plain {row['plain']['median']:8.2f} ms  edit_file "
              f"{row['callgate']['median']:8.2f} ms (x{row['edit_vs_plain']})  {peer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
