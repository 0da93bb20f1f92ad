"""The plugin manifest: what each installed plugin declared when it registered, kept in the
user's state directory so a listing boot (``callgate tools``) imports no plugin (issue 38).

A full boot asked to list (``Host.boot(listing=True)``) with no usable manifest records,
per entry-point plugin, what it declared: the config tables it claimed (schemas), the keys
it added to extensible tables, its tools as data (name, description, schema, flags; its
code is not needed to list them), the final description of each tool with a ``describe``
for the tool set and surface it was asked about, the hooks it implements (with those of
the plugins it registered itself), its subject kinds and ``callgate plugins`` lines.

Declarations, not the composed answer: the core composes the surface afresh on every boot
from them (``[plugins]``, ``[surface]``, ``[permissions]``, the workspace's tightening).
What a plugin declares may depend on its own config tables and on what it probes, so each
set of declarations is kept under a key of those inputs (the OS, the validated values of
the tables it claimed, ``PATH``, ``HOME``, the ``CALLGATE_*`` variables, the workspace),
with every path it looked at, read or listed and every program it started while
registering (seen through the stat calls and an audit hook), each with what it found there:
declarations whose key or paths differ are not used, and the plugins are imported.

The whole manifest is keyed by the environment's fingerprint (`environment_fingerprint`):
the interpreter, callgate's version, and each entry-point distribution's name, version and
``RECORD`` (its stat and CRC; an editable install's source files, by stat), so any
install, upgrade or edit of a plugin makes it stale. It lives in the user's state
directory (never the workspace, which the model controls) and is used only when this user
owns it and no one else can write it; anything else (another owner, group- or
world-writable, unparsable, another format) is ignored and rewritten.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterable
from typing import Any

from .._model.entrypoints import version as dist_version

FORMAT = 2
FILE = "plugin-manifest.json"
#: declarations kept per plugin (one per combination of its inputs seen), newest first
VARIANTS = 8
#: describe answers kept per tool (one per tool set and surface seen)
DESCRIPTIONS = 16


def path() -> str:
    """Where the manifest lives: the user's state directory (`callgate.paths.state_dir`)."""
    from .._config.state import state_dir

    return os.path.join(state_dir(), FILE)


def _stat_key(found: os.stat_result) -> list[int]:
    return [found.st_mtime_ns, found.st_size, found.st_ino, found.st_mode]


def _stat_of(name: str) -> list[int] | None:
    try:
        return _stat_key(os.stat(name))
    except OSError:
        return None


def path_state(name: str, listed: bool = False) -> list[int] | None:
    """What a plugin's registration saw of ``name``: its stat (``None``: missing). A
    directory it only looked at (a component of a path it resolved) by its identity and
    mode, one it listed with its modification time too."""
    try:
        found = os.stat(name)
    except OSError:
        return None
    if (stat.S_ISDIR(found.st_mode) and not listed) or not (
        stat.S_ISDIR(found.st_mode) or stat.S_ISREG(found.st_mode)
    ):  # a device (/dev/null) by its identity too: its times move with every write
        return [0, 0, found.st_ino, found.st_mode]
    return _stat_key(found)


def _editable_sources(dist_path: str, modules: Iterable[str]) -> list[Any]:
    """For an editable install (``direct_url.json`` says so, and where its project is): the
    stat of every source file of the packages its entry points name (``<project>/<name>``
    or ``<project>/src/<name>``, a package or a module), found without importing them."""
    try:
        with open(os.path.join(dist_path, "direct_url.json"), encoding="utf-8") as fh:
            found = json.load(fh)
        editable = bool(found.get("dir_info", {}).get("editable"))
        url = str(found.get("url", ""))
    except (OSError, ValueError, AttributeError):
        return []
    if not editable:
        return []
    if not url.startswith("file://"):
        return [url]
    project = url[len("file://") :]
    if "%" in project:  # urllib.parse (and ipaddress) for a quoted path only
        from urllib.parse import unquote

        project = unquote(project)
    out: list[Any] = []
    for module in sorted(set(modules)):
        roots = [
            candidate
            for base in (project, os.path.join(project, "src"))
            for candidate in (os.path.join(base, module), os.path.join(base, module + ".py"))
            if os.path.exists(candidate)
        ]
        out.append([module, roots])
        for root in roots:
            if not os.path.isdir(root):
                out.append([root, _stat_of(root)])
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith(".py"):
                        full = os.path.join(folder, name)
                        out.append([full, _stat_of(full)])
    return out


def environment_fingerprint(entry_points: Iterable[Any]) -> str:
    """What the plugins' declarations depend on being installed: the
    interpreter, callgate's version, and per distribution with a plugin its name, version,
    ``RECORD`` (stat and CRC) and, installed editable, its source files' stats."""
    parts: list[Any] = [FORMAT, sys.executable, sys.version, dist_version("callgate")]
    by_dist: dict[str, tuple[Any, list[str]]] = {}
    for ep in entry_points:
        dist = ep.dist
        key = getattr(dist, "path", None) or repr(dist)
        module = ep.value.partition(":")[0].strip().split(".")[0]
        by_dist.setdefault(key, (dist, []))[1].append(module)
    for key in sorted(by_dist):
        dist, modules = by_dist[key]
        record = getattr(dist, "path", None)
        entry: list[Any] = [getattr(dist, "name", None), getattr(dist, "version", None)]
        if record is not None:
            record_file = os.path.join(record, "RECORD")
            try:
                with open(record_file, "rb") as fh:
                    entry.append(zlib.crc32(fh.read()))
            except OSError:
                entry.append(None)
            entry.append(_stat_of(record_file))
            entry.append(_editable_sources(record, modules))
        else:  # a layout the entry-point reader leaves to importlib.metadata: no RECORD
            entry.append(key)
        parts.append(entry)
    # the code that writes and reads declarations (the core composes the rest afresh)
    core = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name in ("_host/manifest.py", "_host/listing.py", "_model/spec.py"):
        parts.append(_stat_of(os.path.join(core, name)))
    # the parts themselves, compared as text: no digest (hashlib) on the listing path
    return json.dumps(parts, sort_keys=True)


def checksum(value: str) -> int:
    """What a key keeps of a value it compares: its CRC-32, never the value (a variable or
    a config value may be a token; the manifest is written to disk)."""
    import zlib

    return zlib.crc32(value.encode("utf-8", "surrogateescape"))


def probe_key(os_name: str, workspace: str | None) -> list[Any]:
    """The inputs besides its config tables that a plugin's registration may read without
    the recorder seeing it (variables): part of every declaration's key."""
    env = sorted((k, checksum(v)) for k, v in os.environ.items() if k.startswith("CALLGATE_"))
    return [os_name, workspace, os.environ.get("PATH", ""), env, os.environ.get("HOME")]


def variant_key(probe: list[Any], tables: list[tuple[str, Any]]) -> str:
    """The key of one plugin's declarations: the probe inputs and its tables' values (as
    checksums: a table may hold a token)."""
    values = [
        (table, checksum(json.dumps(value, sort_keys=True, default=repr)))
        for table, value in tables
    ]
    return json.dumps([probe, values], sort_keys=True)


def describe_key(registered: Iterable[str], visible: Iterable[str]) -> str:
    """The key of one ``describe`` answer: the tool set and the surface it was asked about."""
    return json.dumps([sorted(registered), sorted(visible)])


def read(where: str, fingerprint: str) -> dict[str, Any] | None:
    """The manifest at ``where`` if this user owns it, no one else can write it or its
    directory, it parses, and it is for ``fingerprint``; else ``None``."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        folder = os.stat(os.path.dirname(where))
        fd = os.open(where, flags)
    except OSError:
        return None
    try:
        found = os.fstat(fd)
        if not _owned(found) or not _owned(folder):
            return None
        if not stat.S_ISREG(found.st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or data.get("fingerprint") != fingerprint
        or not isinstance(data.get("plugins"), dict)
    ):
        return None
    return data


def _owned(found: os.stat_result) -> bool:
    """Owned by this user and writable by no one else."""
    getuid: Callable[[], int] | None = getattr(os, "geteuid", None)
    if getuid is not None and found.st_uid != getuid():
        return False
    return not found.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def write(where: str, data: dict[str, Any]) -> None:
    """Write the manifest atomically (this user's only); a failure leaves the old one."""
    folder = os.path.dirname(where)
    temp = f"{where}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, sort_keys=True, separators=(",", ":"))
        os.replace(temp, where)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass


def merge(old: dict[str, Any] | None, fingerprint: str, new: dict[str, Any]) -> dict[str, Any]:
    """``new`` plugins' declarations ahead of those ``old`` kept (same fingerprint), at most
    `VARIANTS` per plugin; describe answers merged per tool."""
    plugins: dict[str, Any] = {}
    kept = old["plugins"] if old is not None else {}
    for name in sorted(set(kept) | set(new)):
        variants = dict(new.get(name, {}))
        for key, value in kept.get(name, {}).items():
            if len(variants) >= VARIANTS:
                break
            if key not in variants:
                variants[key] = value
            else:
                _merge_descriptions(variants[key], value)
        plugins[name] = variants
    return {"format": FORMAT, "fingerprint": fingerprint, "plugins": plugins}


def _merge_descriptions(into: dict[str, Any], older: dict[str, Any]) -> None:
    answers = {t["name"]: t.get("described") for t in older.get("tools", [])}
    for tool in into.get("tools", []):
        mine, theirs = tool.get("described"), answers.get(tool["name"])
        if isinstance(mine, dict) and isinstance(theirs, dict):
            for key, text in theirs.items():
                if len(mine) >= DESCRIPTIONS:
                    break
                mine.setdefault(key, text)


__all__ = [
    "FILE",
    "FORMAT",
    "checksum",
    "describe_key",
    "environment_fingerprint",
    "merge",
    "path",
    "probe_key",
    "read",
    "variant_key",
    "write",
]
