"""The ripgrep grep engine: the ``rg`` binary of the PyPI ``ripgrep`` package, read via ``--json``.

rg runs at the workspace root with every ignore source switched off except
``.gitignore`` files at and below the searched path, never following
symlinks and skipping hidden names. It runs parallel (``--sort path`` would walk
on one thread); its output is collected and its files put in the order
``--sort path`` gives, the order the model reads (issue 38). A flood of output
(the match cap surely exceeded) stops that run for rg's ordered one, which
streams in path order. What rg cannot know (the ``.gitignore`` files
above a searched subdirectory, path-shaped ``glob`` filters, the read deny
list's ``~/.ssh``) is applied to its output here, and so is the walk's one rule
for hidden names (`callgate_toolkit.walk.hidden_skipped`): rg also shows a hidden
file its ``--type`` filter names, and cannot know a ``!`` rule above the searched
folder (then it lists hidden names too, ``--hidden``, and they are judged here).
Reading stops, and rg is killed, at a flood, once the ordered run knows the match
cap is exceeded, when the deadline passes or the batch is cancelled.

rg walks by path names, so a directory swapped for a symlink while it runs could
lead it outside the workspace. Its output is therefore only a candidate list:
every file it reports is read again here, beneath the held root (race-free), and
kept only when each line rg showed is that line of the file read; anything else
is dropped. What the model sees is always text of a file inside the root.

rg is started through the core's door (`callgate.process`): in the session's sandbox
with the workspace read-only and no network where one works, with the host's
environment without secrets.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any

from callgate import process
from callgate.files import DENIED_NAMES
from callgate.paths import PRUNE

from ._engine_python import open_file
from ._grep_model import FileHits, GrepRequest

BASE_FLAGS = ("--json", "--no-config", "--no-ignore-global",
              "--no-ignore-parent", "--no-ignore-dot", "--no-ignore-exclude", "--no-require-git",
              # every pruned name, hidden ones too: a "!" rule may re-include a hidden name
              # (`!.*`), and no rule re-opens a pruned folder for either engine
              *(arg for name in sorted(PRUNE) for arg in ("-g", f"!{name}")))


class InvalidPattern(Exception):
    """rg refused the pattern; the message is rg's own first line of substance."""


def command(rg: str, req: GrepRequest, *, ordered: bool = False) -> list[str]:
    """The rg command line for ``req`` (run with the workspace root as working directory):
    parallel and unordered, or in path order (one thread) when ``ordered``."""
    args = [rg, *BASE_FLAGS, *(("--sort", "path") if ordered else ())]
    if not req.is_file and req.rules.reincludes_between(req.target_rel):
        # a "!" rule above the searched folder, which rg does not read, may re-include a
        # hidden name below it: rg lists hidden names too and they are judged here
        args.append("--hidden")
    if req.ignore_case:
        args.append("--ignore-case")
    if req.context:
        args += ["--context", str(req.context)]
    if req.glob is not None and req.glob.by_name and not req.is_file:
        args += ["--type-add", f"cg:{req.glob.pattern}",
                 "--type-not" if req.glob.exclude else "--type", "cg"]
    args += ["--max-filesize", str(req.max_file_bytes)]
    if req.denied is not None:
        for name in DENIED_NAMES:  # files and directories, at any depth, in any case
            args += ["--iglob", f"!{name}"]
    args += ["--regexp", req.pattern, "--", req.target_rel or "."]
    return args


def _text(field: dict[str, Any]) -> str:
    if "text" in field:
        return field["text"]
    return base64.b64decode(field["bytes"]).decode("utf-8", "replace")


def _line(field: dict[str, Any]) -> str:
    text = _text(field)
    return text[:-1] if text.endswith("\n") else text


def _rel(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def rg_error(stderr: str) -> str:
    """rg's first message line, with the cause of a regex parse error attached."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    if not lines:
        return "rg rejected the pattern"
    first = lines[0].removeprefix("rg: ")
    cause = next((ln.removeprefix("error: ") for ln in lines if ln.startswith("error:")), None)
    if cause and first.endswith(":"):
        return f"{first} {cause}"
    return first


def search(rg: str, req: GrepRequest, session: Any) -> Iterator[FileHits]:
    """Yield the hits of each file with a matching line, in path order.

    rg runs parallel and unordered; its whole output is collected and its files put in
    the order ``--sort path`` gives. A flood (more match lines or bytes than the bounds
    below) stops that run and falls back to the ordered, early-stopping one.
    """
    files = _collect(rg, req, session)
    if files is None:
        yield from _ordered(rg, req, session)
        return
    files.sort(key=lambda chunk: _order_key(chunk[0]))
    begin = _opener(req)
    found = 0
    for chunk in files:
        hits = _parse(begin, chunk)
        if hits is not None and hits.matches and confirmed(req, hits):
            found += len(hits.matches)
            yield hits
            if found > req.limit:
                return


FLOOD_MATCHES_PER_CAP = 1
"""The parallel run gives up past this many match lines per match the request keeps
(``max_matches``): the answer is then (all but surely) cut at the cap, which the ordered
run reaches after reading only the start of the tree in path order, where the parallel
one has to search all of it. The common answer, under the cap, never floods. A flood
costs the parallel run up to that point: about ``max_matches / total matches`` of its
whole-tree time (issue 38, benchmarks/profiles.md)."""
FLOOD_BYTES = 16 << 20
"""... or past this much rg output (long lines, wide context): what the ordered run would
not have read is not held in memory."""

_BEGIN, _END, _MATCH = b"begin", b"end", b"match"


def _kind(raw: bytes) -> bytes:
    """The ``type`` of one rg JSON message, without parsing it (rg writes it first)."""
    if raw.startswith(b'{"type":"'):
        return raw[9:raw.find(b'"', 9)]
    return json.loads(raw).get("type", "").encode()


def _collect(rg: str, req: GrepRequest, session: Any) -> list[list[bytes]] | None:
    """rg's parallel run: the messages of each file, ``begin`` first (rg writes a file's
    messages together); ``None`` when the output passes the flood bounds."""
    most = FLOOD_MATCHES_PER_CAP * req.limit
    files: list[list[bytes]] = []
    current: list[bytes] | None = None
    matches = size = 0
    output = _run(command(rg, req), req, session)
    try:
        for raw in output:
            size += len(raw)
            kind = _kind(raw)
            if kind == _BEGIN:
                current = [raw]
                files.append(current)
            elif current is not None:
                current.append(raw)
                if kind == _MATCH:
                    matches += 1
                elif kind == _END:
                    current = None
            if matches > most or size > FLOOD_BYTES:
                return None
    finally:
        output.close()
    return files


def _order_key(begin: bytes) -> tuple[bytes, ...]:
    """Where rg's ``--sort path`` puts a file: it sorts each directory's entries by name
    (bytes) as it walks, so paths compare component by component ("a/b" before "a.b/x",
    though "." sorts before "/")."""
    field = json.loads(begin)["data"]["path"]
    raw = field["text"].encode("utf-8", "surrogateescape") if "text" in field else \
        base64.b64decode(field["bytes"])
    if os.sep != "/":
        raw = raw.replace(os.sep.encode(), b"/")
    return tuple(raw.split(b"/"))


def _parse(begin: Callable[[dict[str, Any]], FileHits | None], chunk: list[bytes]
           ) -> FileHits | None:
    """The hits of one file's messages (``None`` when a filter here leaves it out)."""
    current: FileHits | None = None
    for raw in chunk:
        message = json.loads(raw)
        kind = message["type"]
        data = message.get("data", {})
        if kind == "begin":
            current = begin(data)
            if current is None:
                return None
        elif kind in ("match", "context") and current is not None:
            number = data["line_number"]
            current.lines[number] = _line(data["lines"])
            if kind == "match":
                current.matches.append(number)
    return current


def _opener(req: GrepRequest) -> Callable[[dict[str, Any]], FileHits | None]:
    """What a ``begin`` message opens: the file's hits, or ``None`` when what rg cannot
    know (see the module docstring) leaves the file out."""
    post_filter_ignores = not req.is_file and req.rules.any_between(req.target_rel)
    post_filter_glob = req.glob is not None and (not req.glob.by_name or req.is_file)

    def begin(data: dict[str, Any]) -> FileHits | None:
        rel = _rel(_text(data["path"]))
        skipping = (post_filter_glob and not req.wanted(rel)) or \
            (post_filter_ignores and req.rules.ignored_below(rel, req.target_rel)) \
            or req.hidden(rel) or \
            (not req.is_file and req.rules.hidden_below(rel, req.target_rel))
        return None if skipping else FileHits(rel)

    return begin


def _ordered(rg: str, req: GrepRequest, session: Any) -> Iterator[FileHits]:
    """rg's ordered run (``--sort path``, one thread): files stream in path order and
    reading stops, rg killed, once the match cap is known to be exceeded."""
    begin = _opener(req)
    output = _run(command(rg, req, ordered=True), req, session)
    try:
        current: FileHits | None = None
        found = 0
        for raw in output:
            message = json.loads(raw)
            kind = message["type"]
            data = message.get("data", {})
            if kind == "begin":
                current = begin(data)
            elif kind in ("match", "context") and current is not None:
                number = data["line_number"]
                current.lines[number] = _line(data["lines"])
                if kind == "match":
                    current.matches.append(number)
            elif kind == "end" and current is not None:
                if current.matches and confirmed(req, current):
                    found += len(current.matches)
                    yield current
                current = None
                if found > req.limit:
                    return
        if current is not None and current.matches and confirmed(req, current):
            yield current  # cut short by the deadline: keep what was found
    finally:
        output.close()


def _run(argv: list[str], req: GrepRequest, session: Any) -> Generator[bytes, None, None]:
    """rg's output lines, rg started through the core's door and killed when the reader
    stops early (``close()``), at the deadline or on cancellation; an invalid pattern
    raises `InvalidPattern` once rg has ended."""
    prepared = process.prepare(session, argv, workspace="read", cwd=req.root, purpose="grep")
    with tempfile.TemporaryFile() as errors:
        proc = prepared.popen(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors)
        done = threading.Event()
        watchdog = threading.Thread(target=_watch, args=(proc, req, done), daemon=True)
        watchdog.start()
        saw_output = False
        try:
            assert proc.stdout is not None
            for raw in proc.stdout:
                saw_output = True
                if not raw.endswith(b"\n"):
                    break  # rg killed mid-line (deadline, cancellation): not a message
                yield raw
        finally:
            done.set()
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
            watchdog.join()
        if proc.returncode == 2 and not saw_output and not req.timed_out:
            errors.seek(0)
            raise InvalidPattern(rg_error(errors.read().decode("utf-8", "replace")))


def confirmed(req: GrepRequest, hits: FileHits) -> bool:
    """Whether every line rg reported for ``hits.path`` is that line of the file read
    again beneath the held root (see the module docstring)."""
    fd = open_file(req.resolved(hits.path), None if req.is_file else req.max_file_bytes)
    if fd is None:
        return False
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    wanted = max(hits.lines)
    codec = _UTF16.get(data[:2])
    if codec is not None:  # rg transcodes UTF-16 with a BOM
        lines = data[2:].decode(codec, "replace").split("\n", wanted)
        return all(n <= len(lines) and lines[n - 1] == line for n, line in hits.lines.items())
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    raw = data.split(b"\n", wanted)  # only the lines shown are decoded (as rg shows them)
    return all(n <= len(raw) and raw[n - 1].decode("utf-8", "replace") == line
               for n, line in hits.lines.items())


_UTF16 = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}


def _watch(proc: subprocess.Popen[bytes], req: GrepRequest, done: threading.Event) -> None:
    """Kill rg at the deadline or on cancellation (checked every 50 ms)."""
    while not done.wait(0.05):
        if req.cancelled.is_set() or time.monotonic() >= req.deadline:
            if time.monotonic() >= req.deadline:
                req.timed_out = True
            if proc.poll() is None:
                proc.kill()
            return
