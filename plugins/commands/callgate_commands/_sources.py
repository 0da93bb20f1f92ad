"""Custom slash commands: ``*.md`` files where Claude Code and callgate keep them.

Directories, highest priority first (a name found twice: the first wins):

1. ``<workspace>/.callgate/commands``  (scope ``project``)
2. ``<workspace>/.claude/commands``    (``project``)
3. ``<state>/commands``                (``user``; `callgate.paths.state_dir()`)
4. ``~/.claude/commands``              (``claude-user``)

A file's name is its path below the directory without ``.md``, sub folders joined
with ``:`` (``frontend/review.md`` is ``frontend:review``). Front matter is
optional: ``description`` (else the body's first line) and ``argument-hint``; other
keys (``allowed-tools``, ``model``) are kept and not acted on. A file with broken
front matter is skipped with a warning naming it. Inside the workspace a command
file must resolve inside it. Scans are cached per directory while the stat of
every folder and file below it holds.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Mapping
from typing import Any

import attrs
from callgate.paths import state_dir

log = logging.getLogger("callgate.commands")

MAX_COMMAND_BYTES = 256 * 1024
MAX_DEPTH = 4
SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
DESCRIPTION_CHARS = 200


@attrs.frozen(kw_only=True)
class Command:
    """One command file."""

    name: str
    description: str
    argument_hint: str | None
    body: str
    path: str
    scope: str
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Problem:
    path: str
    reason: str


@attrs.frozen
class CommandDir:
    path: str
    scope: str
    in_workspace: bool


def command_dirs(workspace_root: str) -> list[CommandDir]:
    return [
        CommandDir(os.path.join(workspace_root, ".callgate", "commands"), "project", True),
        CommandDir(os.path.join(workspace_root, ".claude", "commands"), "project", True),
        CommandDir(os.path.join(state_dir(), "commands"), "user", False),
        CommandDir(
            os.path.join(os.path.expanduser("~"), ".claude", "commands"), "claude-user", False
        ),
    ]


Signature = tuple[tuple[str, int, int], ...]


@attrs.frozen
class DirScan:
    signature: Signature
    commands: tuple[Command, ...]
    problems: tuple[Problem, ...]


_scans: dict[tuple[str, bool, str], DirScan] = {}
_lock = threading.Lock()


def _walk(root: str) -> tuple[Signature, list[tuple[str, str]]]:
    """The signature of everything below ``root`` and its ``(name, path)`` command files."""
    entries: list[tuple[str, int, int]] = []
    files: list[tuple[str, str]] = []
    try:
        st = os.stat(root)
    except OSError:
        return (), []
    entries.append((root, st.st_mtime_ns, st.st_ino))

    def visit(directory: str, prefix: tuple[str, ...]) -> None:
        try:
            with os.scandir(directory) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for entry in items:
            if entry.name.startswith("."):
                continue
            try:
                est = entry.stat()
            except OSError:
                continue
            if entry.is_dir():
                if len(prefix) + 1 < MAX_DEPTH and SEGMENT.match(entry.name):
                    entries.append((entry.path, est.st_mtime_ns, est.st_ino))
                    visit(entry.path, (*prefix, entry.name))
            elif entry.name.endswith(".md") and entry.is_file():
                entries.append((entry.path, est.st_mtime_ns, est.st_size))
                stem = entry.name[:-3]
                if SEGMENT.match(stem):
                    files.append((":".join((*prefix, stem)), entry.path))

    visit(root, ())
    return tuple(entries), files


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:DESCRIPTION_CHARS]
    return ""


def parse_command(text: str, *, name: str, path: str, scope: str) -> Command:
    """A `Command` from a file's text; `ValueError` for broken front matter."""
    meta: dict[str, Any] = {}
    body = text.lstrip("\ufeff")
    if body.startswith("---"):
        import frontmatter
        import yaml

        try:
            post = frontmatter.loads(body)
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(f"{path}: the front matter is not valid YAML ({first})") from None
        meta, body = dict(post.metadata), post.content
    description = meta.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError(f"{path}: description must be a string")
    hint = meta.get("argument-hint")
    if isinstance(hint, list):
        hint = " ".join(str(h) for h in hint)
    if hint is not None and not isinstance(hint, str):
        raise ValueError(f"{path}: argument-hint must be a string")
    extra = {k: v for k, v in meta.items() if k not in ("description", "argument-hint")}
    return Command(
        name=name,
        description=(description or _first_line(body)).strip(),
        argument_hint=hint,
        body=body,
        path=path,
        scope=scope,
        extra=extra,
    )


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _read(spot: CommandDir, name: str, path: str, workspace_root: str) -> Command:
    if spot.in_workspace and not _within(os.path.realpath(path), os.path.realpath(workspace_root)):
        raise ValueError(f"{path}: resolves outside the workspace")
    with open(path, "rb") as fh:
        data = fh.read(MAX_COMMAND_BYTES + 1)
    if len(data) > MAX_COMMAND_BYTES:
        raise ValueError(f"{path}: larger than {MAX_COMMAND_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    return parse_command(text, name=name, path=path, scope=spot.scope)


def scan_dir(spot: CommandDir, workspace_root: str) -> DirScan:
    signature, files = _walk(spot.path)
    key = (spot.path, spot.in_workspace, workspace_root)
    with _lock:
        scan = _scans.get(key)
    if scan is not None and scan.signature == signature:
        return scan
    commands: list[Command] = []
    problems: list[Problem] = []
    for name, path in files:
        try:
            commands.append(_read(spot, name, path, workspace_root))
        except (ValueError, OSError) as exc:
            reason = str(exc) if isinstance(exc, ValueError) else f"{path}: unreadable ({exc})"
            problems.append(Problem(path, reason))
    old = {p.path: p.reason for p in scan.problems} if scan is not None else {}
    for problem in problems:
        if old.get(problem.path) != problem.reason:
            log.warning("skipping slash command %s", problem.reason)
    scan = DirScan(signature, tuple(commands), tuple(problems))
    with _lock:
        _scans[key] = scan
    return scan


def discover(workspace_root: str) -> tuple[dict[str, Command], list[Problem]]:
    """Every command of the workspace and user, by name (the first of a name wins)."""
    found: dict[str, Command] = {}
    problems: list[Problem] = []
    for spot in command_dirs(workspace_root):
        scan = scan_dir(spot, workspace_root)
        problems.extend(scan.problems)
        for command in scan.commands:
            found.setdefault(command.name, command)
    return found, problems
