"""The memory store of one session: remember, forget, read, list and search facts.

Every change holds the scope directory's lock (a thread lock, then a `filelock` file
lock for other processes), re-reads the files under it, checks revision and subject,
writes the fact file with the core's atomic write, and regenerates the managed lines
of ``MEMORY.md`` from the files, so two sessions remembering at once lose nothing.
A refused change writes nothing.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
from callgate import ToolError
from callgate.files import create_file, rename_noreplace, replace_file

from ._fact import (
    INDEX_NAME,
    BadFact,
    Fact,
    Unreadable,
    new_id,
    now_stamp,
    parse_expiry,
    render_fact,
    slug_from,
)
from ._index import FactIndex, Hit, index_for
from ._secrets import find_credentials, summary
from ._vocab import ID_PATTERN, SCOPES

ARCHIVE = ".archive"
LOCK_NAME = ".lock"
LOCK_TIMEOUT_S = 10.0
MANAGED_LINE = re.compile(r"^- \[.*\]\([a-z0-9][a-z0-9-]*\.md\) — \[(?:project|global)/")
INDEX_HEADER = (
    "# Memory\n\n"
    "Lines that link a fact file are managed by callgate and rewritten on every change; "
    "other lines are yours and are kept.\n\n"
)

_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()


@attrs.frozen
class Saved:
    fact: Fact
    created: bool


@attrs.frozen
class Forgotten:
    ref: str
    archived_as: str


def _error(kind: str, signature: str, message: str) -> ToolError:
    return ToolError(kind, message, signature)


class MemoryStore:
    """The project and global stores of one workspace."""

    def __init__(self, directories: Mapping[str, str], max_fact_bytes: int) -> None:
        self.directories = dict(directories)
        self.max_fact_bytes = max_fact_bytes
        self.index: FactIndex = index_for(self.directories)

    # --- reading -----------------------------------------------------------------------

    def search(self, query: str, *, now: float, limit: int, scope: str | None = None,
               type_: str | None = None) -> list[Hit]:
        self.index.refresh()
        return self.index.search(query, now=now, limit=limit,
                                 scopes=[scope] if scope else SCOPES,
                                 types=[type_] if type_ else None)

    def visible(self, *, now: float, scope: str | None = None,
                type_: str | None = None) -> list[Fact]:
        """Every unexpired fact (of ``scope`` and ``type_`` when given), by scope and name."""
        self.index.refresh()
        return [f for f in self.index.facts() if not f.expired(now)
                and (scope is None or f.scope == scope) and (type_ is None or f.type == type_)]

    def problems(self, scope: str | None = None) -> list[Unreadable]:
        return [p for p in self.index.problems() if scope is None or p.scope == scope]

    def read(self, name: str, *, now: float) -> Fact:
        """The visible fact ``name`` names, or `ToolError` ``not_found`` / ``tool_error``."""
        self.index.refresh()
        found = self._lookup(name)
        if isinstance(found, Unreadable):
            raise _error("tool_error", "MEMORY_UNREADABLE",
                         f"{found.ref}.md cannot be read: {found.reason}. Fix the file by hand "
                         "or forget it.")
        if found is None:
            raise _error("not_found", "MEMORY_NOT_FOUND",
                         f"no memory named {name!r}; use memory list or search to find its "
                         "name")
        if found.expired(now):
            raise _error("not_found", "MEMORY_EXPIRED",
                         f"{found.ref} expired at {found.expires_at}; remember it again if it "
                         "still holds")
        return found

    def _lookup(self, name: str) -> Fact | Unreadable | None:
        """Resolve an id, ``project/<slug>``, ``global/<slug>`` (``.md`` optional) or a slug."""
        text = name.strip()
        if re.fullmatch(ID_PATTERN, text):
            return self.index.by_id(text)
        if text.endswith(".md"):
            text = text[:-3]
        scope, sep, slug = text.partition("/")
        if sep:
            if scope not in SCOPES:
                raise _error("invalid_arguments", "MEMORY_BAD_NAME",
                             f"{name!r}: a qualified name starts with project/ or global/")
            return self.index.get(scope, slug)
        found = {s: f for s in SCOPES if (f := self.index.get(s, text)) is not None}
        if len(found) > 1:
            raise _error("invalid_arguments", "MEMORY_AMBIGUOUS",
                         f"{text!r} exists as project/{text} and global/{text}; name one of "
                         "them")
        return next(iter(found.values()), None)

    # --- changing ----------------------------------------------------------------------

    def remember(self, args: Mapping[str, Any], *, now: float) -> Saved:
        body = args["body"].strip("\n").rstrip()
        description = " ".join(args["description"].split())
        if not body.strip() or not description:
            raise _error("invalid_arguments", "MEMORY_BLANK",
                         "description and body need non-space text")
        size = len(body.encode("utf-8"))
        if size > self.max_fact_bytes:
            raise _error("invalid_arguments", "MEMORY_TOO_LARGE",
                         f"the body is {size} bytes; a fact holds at most "
                         f"{self.max_fact_bytes} ([memory] max_fact_bytes). Store the "
                         "essentials, or split it into several facts.")
        keywords = tuple(dict.fromkeys(" ".join(k.split()) for k in args.get("keywords") or ()
                                       if k.strip()))
        findings = find_credentials([
            ("body", body), ("description", description), ("title", args.get("title") or ""),
            ("keywords", "\n".join(keywords)), ("subject_key", args.get("subject_key") or "")])
        if findings:
            raise _error("invalid_arguments", "MEMORY_CREDENTIAL",
                         f"refused: this looks like a credential ({summary(findings)}). "
                         "Memory is plain text on disk; store where the secret is kept (a "
                         "vault item, an environment variable's name), never its value. "
                         "Nothing was saved.")
        expires = _expiry(args, now)
        fields = {"body": body, "description": description, "keywords": keywords,
                  "expires": expires}
        self.index.refresh()
        planned, _ = self._plan(args, fields, now)  # refuse before creating anything
        with self._locked(planned.scope):
            self.index.refresh()
            fact, created = self._plan(args, fields, now)  # again, under the lock
            self._write(fact, created=created)
            self._rewrite_index(fact.scope, now)
        self.index.refresh()
        return Saved(fact, created=created)

    def _plan(self, args: Mapping[str, Any], fields: Mapping[str, Any],
              now: float) -> tuple[Fact, bool]:
        """The fact this call would write and whether it is new, or the refusal."""
        target = self._target(args)
        scope = target.scope if target is not None else (args.get("scope") or "project")
        name = self._name_for(args, target, scope)
        expected = args.get("expected_revision")
        if expected is not None and target is None:
            raise _error("not_found", "MEMORY_NOT_FOUND",
                         f"no memory {scope}/{name} to update at revision {expected}; "
                         "leave out expected_revision to create it")
        if expected is not None and target is not None and target.revision != expected:
            raise _error("stale_version", "MEMORY_STALE_REVISION",
                         f"{target.ref} is at revision {target.revision}, not {expected} "
                         "(it changed since you read it); read it again, then retry "
                         f"with expected_revision={target.revision}")
        fact = self._next_fact(args, target, scope=scope, name=name, now=now, **fields)
        self._check_subject(fact, now)
        return fact, target is None

    def forget(self, name: str, *, now: float) -> Forgotten | None:
        """Archive the fact ``name`` names; ``None`` when there is none (not an error)."""
        self.index.refresh()
        found = self._lookup(name)
        if found is None:
            return None
        with self._locked(found.scope):
            self.index.refresh()
            found = self.index.get(found.scope, found.name)
            if found is None:
                return None
            directory = self.directories[found.scope]
            archive = os.path.join(directory, ARCHIVE)
            os.makedirs(archive, mode=0o700, exist_ok=True)
            stamp = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y%m%dT%H%M%SZ")
            source = os.path.join(directory, found.name + ".md")
            for attempt in range(1, 100):
                suffix = "" if attempt == 1 else f"-{attempt}"
                archived = f"{stamp}{suffix}-{found.name}.md"
                try:
                    rename_noreplace(source, os.path.join(archive, archived))
                    break
                except FileExistsError:
                    continue
                except FileNotFoundError:
                    return None
            else:
                raise _error("tool_error", "MEMORY_ARCHIVE_FULL",
                             f"cannot archive {found.ref}: too many archived copies this second")
            self._rewrite_index(found.scope, now)
        self.index.refresh()
        return Forgotten(found.ref, f"{ARCHIVE}/{archived}")

    # --- the steps of remember ------------------------------------------------------------

    def _target(self, args: Mapping[str, Any]) -> Fact | None:
        """The fact this call updates (by id, else by name in its scope), or ``None``."""
        if args.get("id"):
            fact = self.index.by_id(args["id"])
            if fact is None:
                raise _error("not_found", "MEMORY_NOT_FOUND",
                             f"no memory has id {args['id']}; use memory list to find it, or "
                             "leave out id to create a new fact")
            if args.get("scope") and args["scope"] != fact.scope:
                raise _error("invalid_arguments", "MEMORY_SCOPE_CHANGE",
                             f"{args['id']} is {fact.ref}; a fact cannot move to scope "
                             f"{args['scope']} (remember it there and forget this one)")
            if args.get("name") and args["name"] != fact.name:
                raise _error("invalid_arguments", "MEMORY_NAME_CHANGE",
                             f"{args['id']} is named {fact.name}; a fact keeps its name "
                             "(remember it under the new name and forget this one)")
            return fact
        if args.get("name"):
            found = self.index.get(args.get("scope") or "project", args["name"])
            if isinstance(found, Unreadable):
                raise _error("tool_error", "MEMORY_UNREADABLE",
                             f"{found.ref}.md cannot be read: {found.reason}. Fix the file by "
                             "hand or forget it first; it was left as it is.")
            return found
        return None

    def _name_for(self, args: Mapping[str, Any], target: Fact | None, scope: str) -> str:
        if target is not None:
            return target.name
        if args.get("name"):
            return str(args["name"])
        base = slug_from(args.get("title") or args["description"])
        for n in range(1, 1000):
            candidate = base if n == 1 else f"{base}-{n}"
            if self.index.get(scope, candidate) is None:
                return candidate
        raise _error("tool_error", "MEMORY_NO_NAME", f"choose a name: {base}-* are all taken")

    def _next_fact(self, args: Mapping[str, Any], target: Fact | None, *, scope: str,
                   name: str, body: str, description: str, keywords: tuple[str, ...],
                   expires: tuple[str | None, float | None] | None, now: float) -> Fact:
        """The fact as it will be written: given fields, else the old ones, else defaults."""
        def keep(key: str, default: Any) -> Any:
            if args.get(key) is not None:
                return args[key]
            return getattr(target, key) if target is not None else default

        expires_at, expires_ts = expires if expires is not None else (
            (target.expires_at, target.expires) if target is not None else (None, None))
        stamp = now_stamp(now)
        return Fact(
            id=target.id if target is not None else new_id(),
            revision=target.revision + 1 if target is not None else 1,
            name=name, scope=scope,
            title=" ".join(str(keep("title", description[:120])).split()),
            description=description, type=keep("type", "project"),
            activation=keep("activation", "relevant"), body=body,
            created_at=(target.created_at or stamp) if target is not None else stamp,
            updated_at=stamp,
            subject_key=keep("subject_key", None) or None,
            expires_at=expires_at, expires=expires_ts,
            keywords=keywords if args.get("keywords") is not None else (
                target.keywords if target is not None else ()),
        )

    def _check_subject(self, fact: Fact, now: float) -> None:
        if not fact.subject_key:
            return
        for other in self.index.facts():
            if (other.scope == fact.scope and other.subject_key == fact.subject_key
                    and other.id != fact.id and not other.expired(now)):
                raise _error("already_exists", "MEMORY_SUBJECT_TAKEN",
                             f"subject_key {fact.subject_key!r} is already held by {other.ref} "
                             f"(id={other.id}, revision={other.revision}); update that fact "
                             "(its id and expected_revision), or forget it first")

    def _write(self, fact: Fact, *, created: bool) -> None:
        directory = self.directories[fact.scope]
        path = os.path.join(directory, fact.name + ".md")
        data = render_fact(fact)
        try:
            if created:
                create_file(path, data)
            else:
                try:
                    replace_file(path, data)
                except FileNotFoundError:  # removed by hand since it was read
                    create_file(path, data)
        except FileExistsError:
            raise _error("already_exists", "MEMORY_NAME_TAKEN",
                         f"{fact.ref}.md appeared while it was being created; read it, then "
                         "retry") from None

    def _rewrite_index(self, scope: str, now: float) -> None:
        """Regenerate ``MEMORY.md``'s managed lines from the files; keep every other line."""
        self.index.refresh()
        path = os.path.join(self.directories[scope], INDEX_NAME)
        try:
            with open(path, encoding="utf-8") as fh:
                existing: str | None = fh.read()
        except FileNotFoundError:
            existing = None
        except (OSError, UnicodeDecodeError):
            return  # an index we cannot read is the user's business; the facts are written
        facts = [f for f in self.index.facts() if f.scope == scope and not f.expired(now)]
        text = render_index(existing, facts)
        if text == existing:
            return
        data = text.encode("utf-8")
        if existing is None:
            with contextlib.suppress(FileExistsError):
                create_file(path, data)
                return
        replace_file(path, data)

    @contextlib.contextmanager
    def _locked(self, scope: str) -> Iterator[None]:
        import filelock

        directory = self.directories[scope]
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with _thread_locks_guard:
            thread_lock = _thread_locks.setdefault(directory, threading.Lock())
        if not thread_lock.acquire(timeout=LOCK_TIMEOUT_S):
            raise _busy(scope)
        try:
            lock = filelock.FileLock(os.path.join(directory, LOCK_NAME), timeout=LOCK_TIMEOUT_S)
            try:
                lock.acquire(poll_interval=0.005)
            except filelock.Timeout:
                raise _busy(scope) from None
            try:
                yield
            finally:
                lock.release()
        finally:
            thread_lock.release()


def render_index(existing: str | None, facts: list[Fact]) -> str:
    """``MEMORY.md``: the user's lines where they were, the managed lines where they were."""
    managed = [index_line(f) for f in facts]
    if existing is None:
        return INDEX_HEADER + "".join(line + "\n" for line in managed)
    lines = existing.splitlines()
    positions = [i for i, line in enumerate(lines) if MANAGED_LINE.match(line)]
    if positions:
        before, after = lines[:positions[0]], [
            line for line in lines[positions[0]:] if not MANAGED_LINE.match(line)]
    else:
        before, after = lines, []
        if before and before[-1].strip():
            before.append("")
    return "".join(line + "\n" for line in [*before, *managed, *after])


def index_line(fact: Fact) -> str:
    title = fact.title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    pinned = " pinned" if fact.pinned else ""
    return f"- [{title}]({fact.name}.md) — [{fact.scope}/{fact.type}{pinned}] {fact.description}"


def _expiry(args: Mapping[str, Any], now: float) -> tuple[str | None, float | None] | None:
    """``(as written, epoch)`` for a given ``expires_at``; ``None`` when it was left out."""
    value = args.get("expires_at")
    if value is None:
        return None
    try:
        expires = parse_expiry(value)
    except BadFact as exc:
        raise _error("invalid_arguments", "MEMORY_BAD_EXPIRY", f"expires_at: {exc}") from None
    if expires is not None and expires <= now:
        raise _error("invalid_arguments", "MEMORY_BAD_EXPIRY",
                     f"expires_at {value!r} is already past; a fact must expire in the future")
    return (None if expires is None else value.strip()), expires


def _busy(scope: str) -> ToolError:
    return _error("timeout", "MEMORY_BUSY",
                  f"the {scope} memory store stayed locked for {LOCK_TIMEOUT_S:.0f} s by "
                  "another session; retry")
