"""BM25 over heading sections (SQLite FTS5), kept per process and refreshed per file.

Each call brings the index in line with the session's catalogue: a document whose
size, mtime or inode changed is split again, one that left the catalogue is dropped,
the rest is untouched. Headings weigh more than body text; a section whose heading
holds every query word, whose document's title does, or whose text holds the query as a
phrase gets a small boost; hits under 15% of the best score are dropped (they matched a
stray word).
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable

import attrs

from ._catalogue import MAX_FILE_BYTES, DocFile
from ._sections import Section, split_sections

WEIGHTS = (5.0, 2.0, 1.0)  # heading, parents (the enclosing headings), body
HEADING_BOOST = 1.25
TITLE_BOOST = 1.2
PHRASE_BOOST = 1.15
CUTOFF = 0.15
MAX_QUERY_TERMS = 32
CACHED_INDEXES = 8


@attrs.frozen
class Hit:
    section: Section
    score: float
    snippet: str


@attrs.define
class _Doc:
    signature: tuple[int, ...]
    rowids: list[int]
    sections: list[Section]
    problem: str | None = None


def query_terms(text: str) -> list[str]:
    return list(dict.fromkeys(re.findall(r"\w+", text.lower())))[:MAX_QUERY_TERMS]


def _all_in(terms: list[str], heading: str) -> bool:
    """Every query word (stemmed crudely: a trailing s ignored) is in ``heading``."""
    words = {w.rstrip("s") for w in _words(heading)}
    return all(t.rstrip("s") in words for t in terms)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


class DocIndex:
    """The sections of a set of documents, searchable."""

    def __init__(self) -> None:
        import sqlite3  # here, not at import: registering the docs tool needs no database

        self.lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute("CREATE VIRTUAL TABLE sections USING fts5(heading, parents, body, "
                         "tokenize = 'porter unicode61 remove_diacritics 2')")
        self._docs: dict[str, _Doc] = {}  # by label
        self._by_rowid: dict[int, Section] = {}
        self._next = 1

    def sync(self, files: Iterable[DocFile]) -> None:
        """Match the index to ``files``: re-split changed documents, drop departed ones."""
        with self.lock:
            wanted: set[str] = set()
            for doc in files:
                wanted.add(doc.label)
                self._sync_one(doc)
            for label in [k for k in self._docs if k not in wanted]:
                self._drop(label)

    def _sync_one(self, doc: DocFile) -> None:
        try:
            st = os.stat(doc.path)
        except OSError:
            self._drop(doc.label)
            return
        signature = (st.st_mtime_ns, st.st_size, st.st_ino, hash(doc.path))
        old = self._docs.get(doc.label)
        if old is not None and old.signature == signature:
            return
        self._drop(doc.label)
        entry = _Doc(signature, [], [])
        if st.st_size > MAX_FILE_BYTES:
            entry.problem = f"larger than {MAX_FILE_BYTES} bytes"
        else:
            try:
                with open(doc.path, encoding="utf-8-sig") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError) as exc:
                entry.problem = f"cannot be read ({exc})"
            else:
                entry.sections = split_sections(text, doc.label)
        for section in entry.sections:
            rowid = self._next
            self._next += 1
            self._db.execute("INSERT INTO sections(rowid, heading, parents, body) "
                             "VALUES (?, ?, ?, ?)", (rowid, section.heading, section.parents,
                                                     section.text))
            self._by_rowid[rowid] = section
            entry.rowids.append(rowid)
        self._docs[doc.label] = entry

    def _drop(self, label: str) -> None:
        entry = self._docs.pop(label, None)
        if entry is None:
            return
        for rowid in entry.rowids:
            self._db.execute("DELETE FROM sections WHERE rowid = ?", (rowid,))
            self._by_rowid.pop(rowid, None)

    def sections(self, label: str) -> list[Section]:
        with self.lock:
            entry = self._docs.get(label)
            return list(entry.sections) if entry is not None else []

    def problem(self, label: str) -> str | None:
        with self.lock:
            entry = self._docs.get(label)
            return entry.problem if entry is not None else None

    def section(self, section_id: str) -> Section | None:
        with self.lock:
            label = section_id.split("#", 1)[0]
            entry = self._docs.get(label)
            if entry is None:
                return None
            return next((s for s in entry.sections if s.id == section_id), None)

    def search(self, text: str, limit: int) -> list[Hit]:
        terms = query_terms(text)
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        weights = ", ".join(str(w) for w in WEIGHTS)
        sql = (f"SELECT rowid, bm25(sections, {weights}) AS rank FROM sections "
               "WHERE sections MATCH ? ORDER BY rank LIMIT ?")
        with self.lock:
            rows = self._db.execute(sql, (match, max(limit * 4, 20))).fetchall()
            phrase = " ".join(_words(text))
            scored = []
            for rowid, rank in rows:
                section = self._by_rowid.get(rowid)
                if section is None:
                    continue
                score = -rank
                if _all_in(terms, section.heading):
                    score *= HEADING_BOOST
                if _all_in(terms, section.trail.split(" › ", 1)[0]):
                    score *= TITLE_BOOST
                if len(terms) > 1 and phrase in " ".join(_words(section.text)):
                    score *= PHRASE_BOOST
                scored.append((score, rowid, section))
            scored.sort(key=lambda item: -item[0])
            if scored:
                floor = scored[0][0] * CUTOFF
                scored = [item for item in scored if item[0] >= floor][:limit]
            snippets: dict[int, str] = {}
            if scored:  # cut snippets for the kept sections only
                marks = ", ".join("?" * len(scored))
                snippets = dict(self._db.execute(
                    "SELECT rowid, snippet(sections, 2, '', '', '…', 32) FROM sections "
                    f"WHERE sections MATCH ? AND rowid IN ({marks})",
                    (match, *(rowid for _, rowid, _ in scored))).fetchall())
        return [Hit(section, score, " ".join((snippets.get(rowid) or "").split()))
                for score, rowid, section in scored]


_indexes: OrderedDict[tuple[object, ...], DocIndex] = OrderedDict()
_indexes_lock = threading.Lock()


def index_for(key: tuple[object, ...]) -> DocIndex:
    """The process's index for one doc-set configuration (kept for the next call)."""
    with _indexes_lock:
        index = _indexes.get(key)
        if index is None:
            index = _indexes[key] = DocIndex()
        _indexes.move_to_end(key)
        while len(_indexes) > CACHED_INDEXES:
            _indexes.popitem(last=False)
        return index
