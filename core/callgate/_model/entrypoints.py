"""Installed entry points and versions, read the way `importlib.metadata` reads them, without
importing it where the environment is plain directories of ``*.dist-info`` (issue 38).

Every ``callgate`` command boots by listing the installed plugins (entry-point group
``callgate``). `importlib.metadata` answers that, but importing it imports ``email``,
``zipfile``, ``csv``, ``socket``, ``calendar`` and ``importlib.resources``: some 45 modules,
a tenth of a cold ``callgate tools``. This module reads the same files with the same rules
(`importlib.metadata` 3.11's: ``sys.path`` in order, ``*.dist-info`` directories, one
distribution per normalized name, the first found winning; ``entry_points.txt`` sections and
``name = value`` lines; ``Name`` and ``Version`` from ``METADATA``'s headers) and hands every
other layout to `importlib.metadata` itself: a zip or egg on ``sys.path``, an ``.egg-info``
directory, or a finder on ``sys.meta_path`` that supplies distributions of its own.
``tests/core/test_entrypoints.py`` checks both agree on every group of the environment.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

_NORMALIZE = re.compile(r"[-_.]+")
#: `importlib.metadata.EntryPoint.pattern`: ``module[:attr.attr] [extras]``
_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


def _normalize(name: str) -> str:
    """PEP 503 normalization with underscores (`importlib.metadata.Prepared.normalize`)."""
    return _NORMALIZE.sub("-", name).lower().replace("-", "_")


class Distribution:
    """An installed distribution's ``*.dist-info`` directory: its ``Name`` and ``Version``
    are read from ``METADATA`` on first use."""

    __slots__ = ("_entry_points", "_headers", "normalized", "path")

    def __init__(self, path: str, normalized: str) -> None:
        self.path = path
        self.normalized = normalized
        self._headers: dict[str, str] | None = None
        self._entry_points: str | None = None

    def entry_points_text(self) -> str:
        """``entry_points.txt`` (empty when there is none), read once."""
        if self._entry_points is None:
            self._entry_points = self.read_text("entry_points.txt") or ""
        return self._entry_points

    def _header(self, key: str) -> Any:
        if self._headers is None:
            self._headers = _headers(self.read_text("METADATA") or "")
        return self._headers.get(key)

    @property
    def name(self) -> Any:
        return self._header("name")

    @property
    def version(self) -> Any:
        return self._header("version")

    def read_text(self, filename: str) -> str | None:
        try:
            with open(os.path.join(self.path, filename), encoding="utf-8") as fh:
                return fh.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return None


def _headers(text: str) -> dict[str, str]:
    """The first ``Name`` and ``Version`` of a core-metadata header block (the lines before
    the first blank one); both are one-line fields."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if sep and key in ("name", "version") and key not in out and line[:1] not in " \t":
            out[key] = value.strip()
    return out


class EntryPoint:
    """One entry point: what `importlib.metadata.EntryPoint` offers callgate's callers."""

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: Distribution | None) -> None:
        self.name = name
        self.value = value
        self.group = group
        self.dist = dist

    def load(self) -> Any:
        """The module the value names, or the attribute after its ``:``."""
        match = re.match(_VALUE, self.value)  # compiled on first load (a listing loads none)
        if match is None:
            raise ValueError(f"entry point {self.name}: malformed value {self.value!r}")
        found: Any = importlib.import_module(match.group("module"))
        for attribute in filter(None, (match.group("attr") or "").split(".")):
            found = getattr(found, attribute)
        return found

    def __repr__(self) -> str:
        return f"EntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"


class _Unsupported(Exception):
    """A layout this reader leaves to `importlib.metadata`."""


def _plain_layout() -> None:
    """Raise `_Unsupported` unless every distribution comes from ``sys.path``'s directories."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and hasattr(finder, "find_distributions"):
            raise _Unsupported


#: the last scan: ``(sys.path with each entry's modification time, its distributions)``
_SCANNED: list[Any] = [None, []]


def _distributions() -> list[Distribution]:
    """Every distribution on ``sys.path`` (`_scan`), scanned again only when ``sys.path``
    or a directory on it changed (an install adds or removes a ``*.dist-info``): boot asks
    for the entry points and versions several times."""
    _plain_layout()
    key = []
    for entry in sys.path:
        try:
            key.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            key.append((entry, None))
    if _SCANNED[0] != key:
        _SCANNED[1] = list(_scan())
        _SCANNED[0] = key
    return _SCANNED[1]


def _scan() -> Iterator[Distribution]:
    """Every distribution on ``sys.path``, one per normalized name, the first found."""
    seen: set[str] = set()
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            raise _Unsupported from None  # a zip on sys.path
        except OSError:
            continue
        if root.lower().endswith(".egg"):
            raise _Unsupported
        infos: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith(".egg-info"):
                raise _Unsupported
            if low.endswith(".dist-info"):
                name = _normalize(low.rpartition(".")[0].partition("-")[0])
                infos.setdefault(name, []).append(os.path.join(entry, child))
        for name, paths in infos.items():
            for path in paths:
                if name not in seen:
                    seen.add(name)
                    yield Distribution(path, name)


def _parse(text: str, group: str, dist: Distribution) -> Iterator[EntryPoint]:
    """``entry_points.txt``'s ``name = value`` lines of section ``group``."""
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section == group:
            name, _, value = line.partition("=")
            yield EntryPoint(name.strip(), value.strip(), group, dist)


@functools.cache
def _fallback() -> Any:
    import importlib.metadata

    return importlib.metadata


def entry_points(group: str) -> list[Any]:
    """The installed entry points of ``group`` (`importlib.metadata.entry_points(group=...)`)."""
    try:
        return [
            ep for dist in _distributions() for ep in _parse(dist.entry_points_text(), group, dist)
        ]
    except _Unsupported:
        return list(_fallback().entry_points(group=group))


def version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None`` when it is not installed."""
    wanted = _normalize(name)
    try:
        for dist in _distributions():
            if dist.normalized == wanted:
                return dist.version
    except _Unsupported:
        pass
    metadata = _fallback()
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


__all__ = ["Distribution", "EntryPoint", "entry_points", "version"]
