"""The one-line hint on a failed sandboxed command: which ``[sandbox]`` key would have
allowed what the sandbox refused.

The output is all there is, so this reads the error messages programs print
for the refusals a sandbox causes: a read-only file system (EROFS) or a
permission denied (EACCES) on a path outside the writable places, a path the
sandbox hides (its private ``/tmp`` and ``/run``: the program says ENOENT for a
path that exists on the host; callgate's own state and config, `Policy.hidden`, named
without a key to open them), and an unreachable network. A path is taken
from the same line (quoted first, then the nearest path-like word) and checked
against the host, so a file that is missing everywhere gets no hint. Of a
huge output only the first 1 Mi and the last 4 Mi characters are read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import attrs

from ._backend import Policy, within

MAX_MATCHES = 200  # refusal messages examined per output, at most
HEAD_CHARS, TAIL_CHARS = 1 << 20, 4 << 20  # where a huge output's messages are looked for
KERNEL_DIRS = ("/proc", "/sys", "/dev")  # not something a config key should open

# The messages, as programs print them (C library strerror, Python, Node, curl, git).
# Plain substring search: it is fast on the largest outputs, where a regex is not.
NEEDLES: dict[str, tuple[str, ...]] = {
    "rofs": ("Read-only file system", "read-only file system", "EROFS", "[Errno 30]"),
    "acces": ("Permission denied", "permission denied", "EACCES", "[Errno 13]"),
    "noent": ("No such file or directory", "no such file or directory", "ENOENT",
              "[Errno 2]"),
    "busy": ("Device or resource busy", "device or resource busy", "EBUSY", "[Errno 16]"),
    "net": ("Network is unreachable", "network is unreachable", "ENETUNREACH", "[Errno 101]",
            "No route to host", "no route to host", "EHOSTUNREACH", "[Errno 113]",
            "Connection refused", "connection refused", "ECONNREFUSED", "[Errno 111]",
            "Couldn't connect to server", "Temporary failure in name resolution", "EAI_AGAIN",
            "Could not resolve host", "Name or service not known", "[Errno -2]",
            "[Errno -3]", "[Errno -5]", "socket: operation not permitted"),
}
_QUOTED = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"|‘([^’\n]+)’|“([^”\n]+)”|`([^`'\n]+)'")
_WORD = re.compile(r"[^\s'\"‘’“”`,;()<>\[\]]+")
_ADJACENT = re.compile(r"(?:^|[\s'\"‘’“”`])([^\s'\"‘’“”`,;()<>\[\]:]+):\s*$")


@attrs.frozen
class Finding:
    """One refusal: its kind (``write``, ``hidden``, ``network``) and the hint sentence."""

    kind: str
    text: str


def refusal_hint(output: str, exit_code: int | None, policy: Policy, cwd: str,
                 home: str | None = None) -> str | None:
    """One line naming the config keys that would allow what the sandbox refused, or
    ``None`` (the command succeeded, or nothing in its output points at the sandbox)."""
    if exit_code == 0 or not output:
        return None
    if len(output) > HEAD_CHARS + TAIL_CHARS:  # errors sit at the start or the end of a log
        output = output[:HEAD_CHARS] + "\n" + output[-TAIL_CHARS:]
    found: dict[str, Finding] = {}
    for kind, line, position in _refusals(output):
        if kind == "net":
            if not policy.network and "network" not in found:
                found["network"] = Finding(
                    "network", "the sandbox has no network, so connections fail (the host's "
                               "loopback and Unix sockets included); set [sandbox] network = "
                               "true to allow them")
            continue
        named = False
        for path, display in _candidates(line, position, cwd, home):
            named = True
            finding = _judge(kind, path, display, policy)
            if finding is not None:
                found.setdefault(finding.kind, finding)
                break
        else:
            if kind == "rofs" and "write" not in found and not named:
                found["write"] = Finding(
                    "write", "the sandbox keeps everything outside the workspace read-only; "
                             "add the directory to [sandbox] writable to allow writing there")
        if len(found) == 3:
            break
    if not found:
        return None
    order = ("write", "hidden", "network")
    return "; ".join(found[k].text for k in order if k in found)


def _refusals(output: str) -> Iterator[tuple[str, str, int]]:
    """``(kind, line, marker position in the line)`` for each refusal message, in output
    order, one per line and kind."""
    hits: list[tuple[int, str]] = []
    for kind, needles in NEEDLES.items():
        for needle in needles:
            at, count = output.find(needle), 0
            while at >= 0 and count < MAX_MATCHES:
                hits.append((at, kind))
                at, count = output.find(needle, at + len(needle)), count + 1
    seen: set[tuple[int, str]] = set()
    for at, kind in sorted(hits)[:MAX_MATCHES]:
        start = output.rfind("\n", 0, at) + 1
        if (start, kind) in seen:
            continue
        seen.add((start, kind))
        end = output.find("\n", at)
        yield kind, output[start:] if end < 0 else output[start:end], at - start


def _candidates(line: str, position: int, cwd: str, home: str | None
                ) -> Iterator[tuple[str, str]]:
    """Paths named on ``line``, absolute and clean, with the words they came from: the word
    right before the message (``bash: x.toml: Read-only file system``), then quoted words,
    then bare words with a ``/``; each group nearest the message first."""
    adjacent = _ADJACENT.search(line[:position])
    if adjacent is not None and adjacent.start(1) > 0:  # not the program's own name
        word = adjacent.group(1)
        path = _absolute(word, cwd, home)
        if path is not None and "://" not in word:
            yield path, word
    quoted, bare = [], []
    spans = []
    for match in _QUOTED.finditer(line):
        text = next(g for g in match.groups() if g is not None)
        quoted.append((match.start(), text))
        spans.append(match.span())
    for match in _WORD.finditer(line):
        if any(a <= match.start() < b for a, b in spans):
            continue
        word = match.group().rstrip(":.")
        if "/" in word and "://" not in word:
            bare.append((match.start(), word))
    for group in (quoted, bare):
        before = sorted((p for p in group if p[0] < position), key=lambda p: -p[0])
        after = sorted((p for p in group if p[0] >= position), key=lambda p: p[0])
        for _pos, word in (*before, *after):
            path = _absolute(word, cwd, home)
            if path is not None:
                yield path, word


def _absolute(word: str, cwd: str, home: str | None) -> str | None:
    if word.startswith("~/") and home:
        word = home + word[1:]
    if "\x00" in word or word.startswith("~"):
        return None
    return os.path.normpath(word if os.path.isabs(word) else os.path.join(cwd, word))


def _judge(kind: str, path: str, display: str, policy: Policy) -> Finding | None:
    if any(within(path, d) for d in KERNEL_DIRS):
        return None
    hidden = next((h for h in policy.hidden if within(path, h)), None)
    if hidden is not None and not any(within(path, b) for b in policy.binds):
        # no key to suggest: these hold every recorded session and the user's settings
        return Finding("hidden", f"{display} is in {hidden}, callgate's own state or config, "
                                 "which the sandbox hides from commands (it holds the "
                                 "recorded sessions of every workspace)")
    if kind in ("rofs", "acces", "busy"):
        if policy.read_only:
            return Finding("write", "this subagent is strictly read-only: the sandbox shows the "
                                    "workspace read-only, so nothing it runs can change a file "
                                    "(only the sandbox's private /tmp is writable)")
        if policy.is_protected(path):
            return Finding("write", f"{display} is protected (callgate's config, git's config "
                                    "and hooks, or [files] protected), so the sandbox keeps it "
                                    "read-only; only the user config's [files] allow_protected "
                                    "can allow changing it")
        if kind == "busy" or policy.writable_inside(path):
            return None
        target = _writable_dir(path)
        if target is None:
            return None
        return Finding("write", f"the sandbox keeps {display} read-only (only the workspace and "
                                f"a private /tmp are writable); to allow writing there, add "
                                f'"{target}" to [sandbox] writable')
    # ENOENT: hidden by the sandbox when the host has it in a directory the sandbox replaced
    if not policy.private(path) or any(within(path, b) for b in policy.binds):
        return None
    existing = _nearest_existing(path)
    if (existing is None or any(within(b, existing) for b in policy.binds)
            or not policy.private(existing) or existing in policy.private_dirs):
        return None
    where = next(d for d in policy.private_dirs if within(path, d))
    if existing == path:
        return Finding("hidden", f"{display} exists outside the sandbox but is hidden (the "
                                 f"sandbox has its own {where}); to allow it, add \"{path}\" to "
                                 "[sandbox] readable (or writable to change it)")
    return Finding("hidden", f"{display} is in {existing}, which the sandbox hides (it has "
                             f"its own {where}); to allow writing there, add \"{existing}\" to "
                             "[sandbox] writable (or readable to read it)")


def _nearest_existing(path: str) -> str | None:
    current = path
    while not os.path.lexists(current):
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return current


def _writable_dir(path: str) -> str | None:
    """The directory to suggest for ``writable``: the path's nearest existing directory
    on the host, if the host would let this user write there at all; never ``/``."""
    existing = _nearest_existing(os.path.realpath(path))
    if existing is None:
        return None
    directory = existing if os.path.isdir(existing) else os.path.dirname(existing)
    if directory == "/" or any(within(directory, d) for d in KERNEL_DIRS):
        return None
    if not os.access(existing, os.W_OK):
        return None  # the host refuses it too: the sandbox is not why it failed
    return directory
