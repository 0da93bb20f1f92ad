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
from typing import Any, ClassVar

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
        #: the process's watcher of this session's roots (`_SharedWatcher`), while joined
        self._watcher: _SharedWatcher | None = None
        #: held while the shared watcher delivers to this session: `stop` waits for a
        #: delivery under way, so nothing reaches the session after it returns
        self._delivering = threading.Lock()

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
            # one watcher thread per set of roots in the process, shared by every session
            # watching them: a thread per session woke every STEP_MS for the GIL each, so
            # 200 sessions on one workspace slowed every request of the server (issue 38)
            self._watcher = _SharedWatcher.join(self)

    def _leader(self) -> FileWatch | None:
        """The parent's watch when it watches the same roots (or follows one that does)."""
        parent = getattr(self.session, "parent", None)
        if parent is None or parent.workspace.read_roots != self.session.workspace.read_roots:
            return None
        try:
            watch = parent.extension(FILE_WATCH)
        except LookupError:
            return None
        watch = watch._following or watch
        return watch if watch._watcher is not None and not watch.stop_event.is_set() else None

    def stop(self) -> None:
        self.stop_event.set()
        leader, self._following = self._following, None
        if leader is not None:
            with leader._lock:
                if self in leader._followers:
                    leader._followers.remove(self)
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.leave(self)
            with self._delivering:  # a delivery under way ends first; later ones see stop
                self.session.file_changes.watched.clear()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()

    def _deliver(self, changes: Any) -> None:
        """A batch (maybe empty: the watcher is alive) from the shared watcher, for this
        session and the sub-agents following it (none once it has stopped)."""
        with self._delivering:
            if not self.stop_event.is_set():
                self._deliver_now(changes)

    def _deliver_now(self, changes: Any) -> None:
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
            batch = [FileChange(path, _KINDS[change], "watch") for change, path in changes]
            for watch in (self, *followers):
                watch.session.file_changes.publish(batch)

    def _unwatched(self) -> None:
        """The shared watcher stopped (or could not start)."""
        with self._lock:
            followers = list(self._followers)
        for watch in (self, *followers):
            watch.session.file_changes.watched.clear()

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


class _SharedWatcher:
    """One watcher thread over one set of roots, feeding every session that watches them.

    Sessions join and leave; the last to leave stops the thread (and waits for it, as a
    session's own watcher was waited for). A watcher that stops by itself (watchfiles
    missing or failing) leaves the table, so the next session to start tries again."""

    _table: ClassVar[dict[tuple[str, ...], _SharedWatcher]] = {}
    _table_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self.stop_event = threading.Event()
        self.watching = threading.Event()
        self.members: list[FileWatch] = []
        self.thread = threading.Thread(target=self._run, name="callgate-files-watch",
                                       daemon=True)

    @classmethod
    def join(cls, watch: FileWatch) -> _SharedWatcher:
        roots = tuple(dict.fromkeys(watch.session.workspace.read_roots))
        with cls._table_lock:
            shared = cls._table.get(roots)
            fresh = shared is None
            if shared is None:
                shared = cls._table[roots] = cls(roots)
            shared.members.append(watch)
            if shared.watching.is_set():
                watch._deliver(())
            if fresh:  # started under the lock: no one joins a watcher that never ran
                try:
                    shared.thread.start()
                except BaseException:
                    del cls._table[roots]
                    raise
        return shared

    def leave(self, watch: FileWatch) -> None:
        with self._table_lock:
            if watch in self.members:
                self.members.remove(watch)
            last = not self.members
            if last:
                self.stop_event.set()
                if self._table.get(self.roots) is self:
                    del self._table[self.roots]
        if last and self.thread is not threading.current_thread():
            self.thread.join(timeout=5)

    def _run(self) -> None:
        try:
            self._watch()
        finally:
            with self._table_lock:
                if self._table.get(self.roots) is self:
                    del self._table[self.roots]
                members = list(self.members)
            for watch in members:
                watch._unwatched()

    def _watch(self) -> None:
        try:
            import watchfiles
        except ImportError as exc:
            log.warning("files: the outside-change watcher cannot start (%s); edits are still "
                        "checked when they are written", exc)
            return
        roots = [r for r in self.roots if os.path.isdir(r)]
        try:
            for changes in watchfiles.watch(
                    *roots, stop_event=self.stop_event, debounce=DEBOUNCE_MS, step=STEP_MS,
                    watch_filter=_filter, yield_on_timeout=True, rust_timeout=500,
                    raise_interrupt=False, ignore_permission_denied=True):
                with self._table_lock:
                    self.watching.set()
                    members = list(self.members)
                for watch in members:
                    watch._deliver(changes)
        except Exception as exc:
            log.warning("files: the outside-change watcher stopped (%s); edits are still "
                        "checked when they are written", exc)


def _filter(change: Any, path: str) -> bool:
    parts = path.split(os.sep)
    return not any(part in PRUNE for part in parts) and ".callgate-" not in parts[-1]
