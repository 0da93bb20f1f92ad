"""Outside-change notices and the stale-temp sweep: the session's background helpers
(files.md §5.7, §4).

The watcher only tells the model early; the write-time stat and content checks
stay the authority, so a watcher that cannot start (or is switched off, e.g. on
a network filesystem) costs nothing but the notice. Every change it sees is also
published to ``session.file_changes`` (`callgate.files.FileChanges`), for plugins that keep
derived state (a language server re-reads what a shell command changed).
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from callgate import SessionKey
from callgate.files import FileChange, Present, sweep_tree, version_of
from callgate.paths import PRUNE

log = logging.getLogger("callgate.files")

NOTICE_SOURCE = "files"
NOTICE_MAX = 10
DEBOUNCE_MS = 150
STEP_MS = 50
#: watchfiles' Change (added=1, modified=2, deleted=3) as `callgate.files.FileChange` kinds
_KINDS = {1: "created", 2: "changed", 3: "deleted"}


#: ``session.extension(FILE_WATCH)``: this plugin's per-session object
FILE_WATCH: SessionKey[FileWatch] = SessionKey("file_watch")


class FileWatch:
    """One session's watcher thread, pending outside changes and stale-temp sweep."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.stop_event = threading.Event()
        self.sweep_done = threading.Event()
        self.watching = threading.Event()
        self._pending: dict[str, None] = {}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        #: sub-agents' watches fed by this one's watcher (same roots, no thread of their own)
        self._followers: list[FileWatch] = []
        self._following: FileWatch | None = None

    # --- lifecycle ---------------------------------------------------

    def start(self, watch: bool) -> None:
        if getattr(self.session, "parent", None) is None:
            sweeper = threading.Thread(target=self._sweep, name="callgate-files-sweep",
                                       daemon=True)
            sweeper.start()
            self._threads.append(sweeper)
        else:  # a sub-agent's session: its parent swept the same roots
            self.sweep_done.set()
        if watch:
            leader = self._leader()
            if leader is not None:  # a sub-agent on its parent's roots: follow its watcher
                with leader._lock:
                    leader._followers.append(self)
                self._following = leader
                if leader.watching.is_set():
                    self.watching.set()
                return
            watcher = threading.Thread(target=self._watch, name="callgate-files-watch",
                                       daemon=True)
            watcher.start()
            self._threads.append(watcher)

    def _leader(self) -> FileWatch | None:
        """The parent's watch when it watches the same roots with a thread (or follows one)."""
        parent = getattr(self.session, "parent", None)
        if parent is None or parent.workspace.read_roots != self.session.workspace.read_roots:
            return None
        try:
            watch = parent.extension(FILE_WATCH)
        except LookupError:
            return None
        watch = watch._following or watch
        return watch if watch._threads and not watch.stop_event.is_set() else None

    def stop(self) -> None:
        self.stop_event.set()
        leader, self._following = self._following, None
        if leader is not None:
            with leader._lock:
                if self in leader._followers:
                    leader._followers.remove(self)
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()

    def _sweep(self) -> None:
        workspace = self.session.workspace
        try:
            # beneath the held roots: a directory swapped for a link mid-sweep is skipped
            roots = []
            for root in dict.fromkeys(workspace.write_roots):
                try:
                    roots.append(workspace.anchor(root).held())
                except OSError:
                    continue
            try:
                sweep_tree(roots, self.stop_event.is_set)
            finally:
                for held in roots:
                    held.close()
        except Exception:  # a sweep is housekeeping; it must never break a session
            log.debug("stale temp sweep failed", exc_info=True)
        finally:
            self.sweep_done.set()

    def _watch(self) -> None:
        try:
            import watchfiles
        except ImportError as exc:
            log.warning("files: the outside-change watcher cannot start (%s); edits are still "
                        "checked when they are written", exc)
            return
        roots = [r for r in dict.fromkeys(self.session.workspace.read_roots) if os.path.isdir(r)]
        try:
            for changes in watchfiles.watch(
                    *roots, stop_event=self.stop_event, debounce=DEBOUNCE_MS, step=STEP_MS,
                    watch_filter=_filter, yield_on_timeout=True, rust_timeout=500,
                    raise_interrupt=False, ignore_permission_denied=True):
                self.watching.set()
                with self._lock:
                    followers = list(self._followers)
                for watch in (self, *followers):
                    watch.watching.set()
                    watch.session.file_changes.watched.set()
                for _change, path in changes:
                    self.changed(path)
                    for follower in followers:
                        follower.changed(path)
                if changes:  # for plugins that keep derived state (a language server)
                    batch = [FileChange(path, _KINDS[change], "watch")
                             for change, path in changes]
                    for watch in (self, *followers):
                        watch.session.file_changes.publish(batch)
        except Exception as exc:
            log.warning("files: the outside-change watcher stopped (%s); edits are still "
                        "checked when they are written", exc)
        finally:
            self.session.file_changes.watched.clear()

    # --- events and the notice ---------------------------------------------------

    def changed(self, path: str) -> None:
        """A watcher event: note ``path`` if the session saw a version it no longer has."""
        canonical = os.path.realpath(path)
        if not self._moved(canonical):
            return
        with self._lock:
            self._pending[canonical] = None
        self.session.notices.put(NOTICE_SOURCE, self.notice)

    def _moved(self, canonical: str) -> bool:
        entry = self.session.ledger.entry(canonical)
        if not isinstance(entry, Present):
            return False
        try:
            st = os.stat(canonical)
        except OSError:
            return True
        return version_of(st) != entry.version

    def notice(self) -> str | None:
        """The notice text at delivery: paths still changed (shown ones leave the set)."""
        with self._lock:
            pending, self._pending = list(self._pending), {}
        names = [self.session.workspace.display(p) for p in pending if self._moved(p)]
        if not names:
            return None
        shown = ", ".join(names[:NOTICE_MAX])
        if len(names) > NOTICE_MAX:
            shown += f" and {len(names) - NOTICE_MAX} more"
        return f"[changed outside this session since it was last read: {shown}; read before " \
               "editing]"


def _filter(change: Any, path: str) -> bool:
    parts = path.split(os.sep)
    return not any(part in PRUNE for part in parts) and ".callgate-" not in parts[-1]
