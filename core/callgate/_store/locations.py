"""Where the session store is, which backend serves it, and one open store per location.

``[sessions] store`` names it: a path (``~`` expanded; relative to the config file's
directory), or a URL whose scheme names a backend installed under the
``callgate.stores`` entry-point group (a plain path is the ``file`` scheme, which
``callgate-store-sqlite`` serves; ``postgresql://...`` is ``callgate-store-postgres``'s).
Without it, the store is ``<state dir>/sessions/sessions.sqlite3``
(`callgate.paths.state_dir`: ``$CALLGATE_HOME`` or the platform's user state
directory). No backend is part of the core: a host without one keeps its sessions in
memory only (`_session.durable`). Each process opens a location once; its sessions
share the store and its writer (`_store.recorder.Recorder`).
"""

from __future__ import annotations

import os
import re
import threading
from typing import TYPE_CHECKING, Any

from .._config.state import state_dir
from .._model import entrypoints as metadata

if TYPE_CHECKING:  # the store's machinery loads with the first store opened: boot only
    from .recorder import Recorder  # asks `is_url` of ``[sessions] store`` (issue 38)

ENTRY_POINT_GROUP = "callgate.stores"
FILE_NAME = "sessions.sqlite3"
_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")

_lock = threading.Lock()
_open: dict[str, tuple[Any, Recorder]] = {}
_openers: dict[str, Any] = {}


def default_location() -> str:
    return os.path.join(state_dir(), "sessions", FILE_NAME)


def is_url(location: str) -> bool:
    """Whether a ``[sessions] store`` value is a URL (``sqlite:///…``, ``postgresql://…``)."""
    return _URL.match(location) is not None


def resolve_location(configured: str | None, config_file: str | None = None) -> str:
    """The store's location: a URL as given, a path made absolute, or the default."""
    if not configured:
        return default_location()
    if _URL.match(configured):
        return configured
    path = os.path.expanduser(configured)
    if not os.path.isabs(path):
        base = os.path.dirname(os.path.abspath(config_file)) if config_file else os.getcwd()
        path = os.path.join(base, path)
    return os.path.abspath(path)


def scheme_of(location: str) -> str:
    """The scheme naming ``location``'s backend: a URL's own, ``file`` for a plain path."""
    found = _URL.match(location)
    return "file" if found is None else found.group(1).lower()


def opener_for(location: str) -> Any:
    """The opener an installed backend registers for ``location``'s scheme (the
    ``callgate.stores`` entry points; ``callgate-store-sqlite`` serves ``file`` and
    ``sqlite``), or ``None`` when no installed backend serves it."""
    scheme = scheme_of(location)
    if scheme not in _openers:  # looked up once per process: a session open asks each time
        found = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == scheme]
        _openers[scheme] = found[0].load() if found else None
    return _openers[scheme]


def _no_backend(location: str) -> Exception:
    from .records import StoreError

    scheme = scheme_of(location)
    hint = (
        " (install callgate-store-sqlite, which callgate[all] includes)"
        if scheme in ("file", "sqlite")
        else ""
    )
    return StoreError(
        f"session store {location}: no installed backend serves {scheme}:// stores{hint}; "
        f"backends are entry points in the {ENTRY_POINT_GROUP} group",
        location,
    )


def _backend_for(location: str) -> Any:
    opener = opener_for(location)
    if opener is None:
        raise _no_backend(location)
    return opener(location)


def open_store(location: str | None = None) -> Any:
    """The store at ``location`` (default: `default_location`), opened once per process."""
    return opened(location)[0]


def open_reader(location: str | None = None) -> Any:
    """The store at ``location`` opened to read only, apart from the writing one: the
    backend's opener is asked with ``read_only=True`` when it takes it (an SQLite file is
    then opened read-only: nothing created, migrated or settled; `StoreError` if it is
    missing)."""
    import inspect

    where = location or default_location()
    opener = opener_for(where)
    if opener is None:
        raise _no_backend(where)
    if "read_only" in inspect.signature(opener).parameters:
        return opener(where, read_only=True)
    return opener(where)


def opened(location: str | None = None) -> tuple[Any, Recorder]:
    """The store at ``location`` and its writer."""
    where = location or default_location()
    with _lock:
        found = _open.get(where)
        if found is None:
            store = _backend_for(where)
            from .recorder import Recorder

            found = _open[where] = (store, Recorder(store))
        return found


def forget(location: str) -> None:
    """Drop a location from this process's open stores (its file was removed or replaced)."""
    with _lock:
        found = _open.pop(location, None)
    if found is not None:
        found[0].close()
