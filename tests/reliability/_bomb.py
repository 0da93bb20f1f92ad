"""One resource bomb in a fresh interpreter, so its memory peak is its own.

``python _bomb.py <scenario> <size> <workdir>`` boots a host with the built-in tools,
warms it up, then runs the scenario's calls while a second session reads a small file
every 100 ms (the responsiveness probe). Prints one JSON object: each call's outcome
and time, the probe's worst latency, and the peak RSS growth of this process per call
(the peak during the call over the RSS just before it; the largest one is the
figure) and of the largest child (rg, bash). The address space is capped
(``RLIMIT_AS``) so a runaway cannot take the shared machine down with it.
"""

from __future__ import annotations

import json
import resource
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

from callgate import ToolCall, sync

AS_CAP = 8 << 30
BUILT_IN = ["files", "shell", "search", "media", "code", "workflow"]


def rss_kib(who: int = resource.RUSAGE_SELF) -> int:
    """Peak RSS in KiB: this process's high-water mark (``VmHWM``, which `reset_peak`
    lowers to the current RSS), or the largest waited-for child's."""
    if who == resource.RUSAGE_SELF:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
    return resource.getrusage(who).ru_maxrss


def current_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def reset_peak() -> None:
    """Forget the peak the scenario's setup reached (Linux: clear_refs 5), best effort."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def long_line(path: Path, size: int) -> None:
    """A single line of ``size`` bytes (no newline) with a needle near the end."""
    block = b"x" * (1 << 20)
    with open(path, "wb") as fh:
        left = size - 16
        while left > 0:
            fh.write(block[: min(left, len(block))])
            left -= len(block)
        fh.write(b"needle-in-line!!")


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + kind + data + \
        zlib.crc32(kind + data).to_bytes(4, "big")


def png_bomb(path: Path, side: int) -> None:
    """A valid greyscale PNG of side × side pixels, all zero: megapixels in kilobytes."""
    header = side.to_bytes(4, "big") * 2 + bytes([8, 0, 0, 0, 0])
    raw = zlib.compressobj(9)
    row = b"\0" * (side + 1)
    parts = [raw.compress(row) for _ in range(side)]
    parts.append(raw.flush())
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) +
                     png_chunk(b"IDAT", b"".join(parts)) + png_chunk(b"IEND", b""))


def gif_frames(path: Path, frames: int) -> None:
    """An animated 1 × 1 GIF of ``frames`` frames, ~23 bytes each (Pillow counts them by
    seeking through every one)."""
    out = bytearray(b"GIF89a" + (1).to_bytes(2, "little") * 2 + bytes([0x80, 0, 0, 0, 0, 0,
                                                                       255, 255, 255]))
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    for i in range(frames):
        out += b"\x21\xf9\x04\x04\x01\x00\x00\x00"  # graphic control: 10 ms
        out += b"\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00"  # a 1 × 1 frame
        out += b"\x02\x02" + (b"\x4c\x01" if i % 2 else b"\x44\x01") + b"\x00"
    path.write_bytes(bytes(out) + b"\x3b")


def jpeg_header(path: Path, side: int) -> None:
    """A JPEG whose frame header declares side × side pixels, with no image data."""
    sof = b"\xff\xc0\x00\x0b\x08" + side.to_bytes(2, "big") * 2 + b"\x01\x01\x11\x00"
    path.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
                     + sof + b"\xff\xd9")


class Probe(threading.Thread):
    """Reads a small file through its own session every 100 ms; keeps the worst latency."""

    def __init__(self, session: Any) -> None:
        super().__init__(daemon=True)
        self.session = session
        self.stop = threading.Event()
        self.worst = 0.0
        self.reads = 0
        self.errors = 0

    def run(self) -> None:
        while not self.stop.wait(0.1):
            started = time.monotonic()
            r = self.session.run(ToolCall("p", "read_file", {"path": "small.txt"}))
            self.worst = max(self.worst, time.monotonic() - started)
            self.reads += 1
            self.errors += r.is_error


def scenario_calls(name: str, size: int, ws: Path) -> list[tuple[str, dict[str, Any]]]:
    if name == "long_line":
        long_line(ws / "big.txt", size)
        return [("read_file", {"path": "big.txt"}),
                ("read_file", {"path": "big.txt", "offset": 1}),
                ("view_image", {"path": "big.txt"}),
                ("code_index", {"action": "outline", "path": "."}),
                ("glob", {"pattern": "*.txt"}),
                ("ls", {"path": ".", "recursive": True}),
                ("grep", {"pattern": "needle", "path": "."}),
                ("grep", {"pattern": "needle", "path": "big.txt"}),
                ("grep", {"pattern": "absent", "path": "."}),
                ("edit_file", {"path": "big.txt", "old_string": "needle", "new_string": "n"}),
                ("write_file", {"path": "big.txt", "content": "x"})]
    if name == "shell_output":
        command = f"head -c {size} /dev/zero | tr '\\0' a; echo"
        return [("bash", {"command": command, "timeout_ms": 600000}),
                ("bash", {"command": command, "run_in_background": True}),
                ("job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 600000}),
                ("job_output", {"job_id": "bash-1"})]
    if name == "image":
        png_bomb(ws / "wide.png", size)
        png_bomb(ws / "ok.png", 6000)
        gif_frames(ws / "frames.gif", 130_000)
        jpeg_header(ws / "huge.jpg", 65_000)
        return [("view_image", {"path": "wide.png"}), ("view_image", {"path": "ok.png"}),
                ("view_image", {"path": "frames.gif"}), ("view_image", {"path": "huge.jpg"})]
    if name == "regex":
        for i in range(size):
            (ws / f"r{i}.txt").write_text("a" * 40 + "!\n")
        return [("grep", {"pattern": "(a|aa)+$", "path": "."}),
                ("grep", {"pattern": "(a+)+$", "path": "."})]
    raise SystemExit(f"unknown scenario {name}")


def main() -> None:
    name, size, work = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    engine = sys.argv[4] if len(sys.argv) > 4 else "auto"
    timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 5
    resource.setrlimit(resource.RLIMIT_AS, (AS_CAP, AS_CAP))
    ws = work / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "small.txt").write_text("small\n")
    calls = scenario_calls(name, size, ws)
    config = {"files": {"watch": False},
              "search": {"timeout_s": timeout, "grep_engine": engine}}
    host = sync.Host.boot(config, entrypoints=BUILT_IN, surface="full")
    session, other = host.open_session(ws), host.open_session(ws)
    session.run(ToolCall("w", "read_file", {"path": "small.txt"}))  # warm-up
    other.run(ToolCall("w", "read_file", {"path": "small.txt"}))
    reset_peak()
    base_self, base_children = rss_kib(), rss_kib(resource.RUSAGE_CHILDREN)
    probe = Probe(other)
    probe.start()
    results = []
    for tool, args in calls:
        reset_peak()
        before = current_kib()
        started = time.monotonic()
        try:
            r = session.run(ToolCall("c", tool, args))
            outcome = {"error": r.error.kind if r.error else None,
                       "signature": r.error.signature if r.error else None,
                       "chars": len(r.text), "head": r.text[:160], "tail": r.text[-80:]}
        except Exception as exc:  # reported, not raised: the figure counts it
            outcome = {"exception": f"{type(exc).__name__}: {exc}"[:300]}
        results.append({"tool": tool, "args": {k: (v if len(str(v)) < 80 else "…")
                                               for k, v in args.items()},
                        "seconds": round(time.monotonic() - started, 2),
                        "peak_growth_mib": round((rss_kib() - before) / 1024, 1), **outcome})
    probe.stop.set()
    probe.join()
    host.close()
    print(json.dumps({
        "scenario": name, "size": size, "engine": engine, "results": results,
        "probe_worst_s": round(probe.worst, 3), "probe_reads": probe.reads,
        "probe_errors": probe.errors,
        "rss_growth_mib": max(r["peak_growth_mib"] for r in results),
        "child_peak_mib": round(rss_kib(resource.RUSAGE_CHILDREN) / 1024, 1),
        "baseline_mib": round(base_self / 1024, 1),
        "child_baseline_mib": round(base_children / 1024, 1)}))


if __name__ == "__main__":
    main()
