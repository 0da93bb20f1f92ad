"""The search index over one project's facts and the global ones: SQLite FTS5 ``bm25()``.

FTS5 ships with Python's ``sqlite3``, ranks with BM25 (per-column weights), cuts
snippets, and updates row by row, so an index kept in memory between calls is
refreshed for the changed files only (`ChangeFeed` says which; without it every
file is statted). Both scopes share one table, so their scores compare. Indexes are
kept per process for the most recently used store pairs and shared by sessions.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping

import attrs

from ._changes import FEED, Subscription
from ._fact import INDEX_NAME, SLUG_RULE, BadFact, Fact, Unreadable, parse_fact

#: Column weights for bm25(): name, title, type, description, keywords, body.
WEIGHTS = (4.0, 4.0, 1.0, 3.0, 3.0, 1.0)
SNIPPET_CHARS = 260
#: A hand-written file larger than this is not read at all (remember caps bodies far lower).
MAX_FILE_BYTES = 1 << 20
MAX_QUERY_TERMS = 32
CACHED_INDEXES = 16


@attrs.frozen
class Hit:
    """One ranked search result: the fact, its BM25 score (higher is better) and a snippet."""

    fact: Fact
    score: float
    snippet: str


@attrs.define
class _Entry:
    signature: tuple[int, ...]
    rowid: int | None
    fact: Fact | None
    problem: Unreadable | None


def query_terms(text: str) -> list[str]:
    """The words of a search text, each one an FTS5 string (so no word is an operator)."""
    words = re.findall(r"\w+", text.lower())
    return list(dict.fromkeys(words))[:MAX_QUERY_TERMS]


class FactIndex:
    """Every fact file under the store directories (``{scope: directory}``), searchable."""

    def __init__(self, directories: Mapping[str, str]) -> None:
        import sqlite3  # here, not at import: registering the memory tools needs no database

        self.directories = dict(directories)
        self.lock = threading.RLock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(
            "CREATE VIRTUAL TABLE facts USING fts5(name, title, type, description, keywords, "
            "body, tokenize = 'porter unicode61 remove_diacritics 2')")
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._by_rowid: dict[int, Fact] = {}
        self._next_rowid = 1
        self._subscriptions: dict[str, Subscription] = {
            scope: FEED.subscribe(directory) for scope, directory in self.directories.items()}

    # --- keeping up with the files ------------------------------------------------------

    def refresh(self) -> None:
        """Bring the index up to date with the files (only changed files are read)."""
        with self.lock:
            for scope, directory in self.directories.items():
                changed = self._subscriptions[scope].changes()
                if changed is None:
                    self._scan(scope, directory)
                else:
                    for name in changed:
                        slug = _slug_of(name)
                        if slug is not None:
                            self._update(scope, directory, slug)

    def _scan(self, scope: str, directory: str) -> None:
        present: set[str] = set()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    slug = _slug_of(entry.name)
                    if slug is not None:
                        present.add(slug)
                        self._update(scope, directory, slug)
        except (FileNotFoundError, NotADirectoryError):
            pass
        for key in [k for k in self._entries if k[0] == scope and k[1] not in present]:
            self._drop(key)

    def _update(self, scope: str, directory: str, slug: str) -> None:
        key = (scope, slug)
        path = os.path.join(directory, slug + ".md")
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            self._drop(key)
            return
        if not _is_regular(st.st_mode):
            self._drop(key)  # a symlink or device in the store is never read
            return
        signature = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
        old = self._entries.get(key)
        if old is not None and old.signature == signature:
            return
        self._drop(key)
        if SLUG_RULE.match(slug):
            fact, problem = _read(path, slug, scope, st.st_size)
        else:
            fact, problem = None, Unreadable(slug, scope, "its file name is not a memory name "
                                             "(lowercase letters, digits and -); rename it")
        entry = _Entry(signature, None, fact, problem)
        if fact is not None:
            entry.rowid = self._insert(fact)
        self._entries[key] = entry

    def _insert(self, fact: Fact) -> int:
        rowid = self._next_rowid
        self._next_rowid += 1
        self._db.execute(
            "INSERT INTO facts(rowid, name, title, type, description, keywords, body) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (rowid, fact.name.replace("-", " "), fact.title, fact.type, fact.description,
             " ".join(fact.keywords), fact.body))
        self._by_rowid[rowid] = fact
        return rowid

    def _drop(self, key: tuple[str, str]) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None and entry.rowid is not None:
            self._db.execute("DELETE FROM facts WHERE rowid = ?", (entry.rowid,))
            self._by_rowid.pop(entry.rowid, None)

    # --- reading (call refresh() first) ------------------------------------------------------

    def facts(self) -> list[Fact]:
        with self.lock:
            return sorted((e.fact for e in self._entries.values() if e.fact is not None),
                          key=lambda f: (f.scope, f.name))

    def problems(self) -> list[Unreadable]:
        with self.lock:
            return sorted((e.problem for e in self._entries.values() if e.problem is not None),
                          key=lambda p: (p.scope, p.name))

    def get(self, scope: str, slug: str) -> Fact | Unreadable | None:
        with self.lock:
            entry = self._entries.get((scope, slug))
            if entry is None:
                return None
            return entry.fact or entry.problem

    def by_id(self, fact_id: str) -> Fact | None:
        with self.lock:
            for entry in self._entries.values():
                if entry.fact is not None and entry.fact.id == fact_id:
                    return entry.fact
            return None

    def search(self, text: str, *, now: float, limit: int, scopes: Iterable[str],
               types: Iterable[str] | None = None) -> list[Hit]:
        """The best ``limit`` unexpired facts for ``text`` (any of its words), best first.

        FTS5 ranks every match (that is the cost of a common word); the filters are then
        applied in Python while reading the ranked rows, and snippets are cut for the kept
        rows only (a snippet in the ranking query would be cut for every match).
        """
        terms = query_terms(text)
        if not terms:
            return []
        scopes, types = set(scopes), set(types) if types is not None else None
        match = " OR ".join(f'"{t}"' for t in terms)
        weights = ", ".join(str(w) for w in WEIGHTS)
        with self.lock:
            ranked = self._db.execute(f"SELECT rowid, bm25(facts, {weights}) FROM facts "
                                      "WHERE facts MATCH ? ORDER BY 2", (match,))
            kept: list[tuple[Fact, float, int]] = []
            for rowid, rank in ranked:
                fact = self._by_rowid.get(rowid)
                if (fact is None or fact.scope not in scopes or fact.expired(now)
                        or (types is not None and fact.type not in types)):
                    continue
                kept.append((fact, -rank, rowid))
                if len(kept) >= limit:
                    break
            ranked.close()
            if not kept:
                return []
            marks = ", ".join("?" * len(kept))
            snippets = dict(self._db.execute(
                "SELECT rowid, snippet(facts, 5, '', '', '…', 40) FROM facts "
                f"WHERE facts MATCH ? AND rowid IN ({marks})",
                (match, *(rowid for _, _, rowid in kept))).fetchall())
        return [Hit(fact, score, _clip(" ".join((snippets.get(rowid) or "").split())))
                for fact, score, rowid in kept]


def _slug_of(file_name: str) -> str | None:
    if not file_name.endswith(".md") or file_name.startswith(".") or file_name == INDEX_NAME:
        return None
    return file_name[:-3] or None


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def _read(path: str, slug: str, scope: str, size: int) -> tuple[Fact | None, Unreadable | None]:
    if size > MAX_FILE_BYTES:
        return None, Unreadable(slug, scope, f"it is larger than {MAX_FILE_BYTES} bytes")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, Unreadable(slug, scope, f"it cannot be opened ({exc.strerror or exc})")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, Unreadable(slug, scope, "it is not UTF-8 text")
    try:
        return parse_fact(text, name=slug, scope=scope), None
    except BadFact as exc:
        return None, Unreadable(slug, scope, str(exc))


def _clip(text: str) -> str:
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


_indexes: OrderedDict[tuple[tuple[str, str], ...], FactIndex] = OrderedDict()
_indexes_lock = threading.Lock()


def index_for(directories: Mapping[str, str]) -> FactIndex:
    """The process's index for these store directories (kept for the next call)."""
    key = tuple(sorted(directories.items()))
    with _indexes_lock:
        index = _indexes.get(key)
        if index is None:
            index = _indexes[key] = FactIndex(directories)
        _indexes.move_to_end(key)
        while len(_indexes) > CACHED_INDEXES:
            _indexes.popitem(last=False)
        return index
