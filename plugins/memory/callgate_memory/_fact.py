"""One fact: a Markdown file ``<slug>.md`` with YAML front matter, read and written with
python-frontmatter (PyYAML underneath), never by hand.

The file is the truth. Its directory decides the scope and its file name the slug,
whatever the front matter says; a hand-written file without an id or a description
still reads (the id is derived from scope and slug, the description from the body).
A file that cannot be read becomes an `Unreadable` with the reason, shown by
``memory list`` and refused by ``remember``, never silently replaced.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import uuid
from collections.abc import Mapping
from typing import Any

import attrs

from ._vocab import ACTIVATIONS, SLUG_PATTERN, TYPES

DEFAULT_TYPE = "project"
SLUG_RULE = re.compile(SLUG_PATTERN)
INDEX_NAME = "MEMORY.md"
#: The front-matter keys in the order they are written.
KEYS = ("id", "revision", "created_at", "updated_at", "name", "title", "description", "type",
        "scope", "activation", "subject_key", "expires_at", "keywords")


class BadFact(ValueError):
    """A fact file (or a value for one) that cannot be used; the message says why."""


@attrs.frozen
class Fact:
    """A stored fact as read from its file. ``expires`` is epoch seconds, ``None`` for never."""

    id: str
    revision: int
    name: str
    scope: str
    title: str
    description: str
    type: str
    activation: str
    body: str
    created_at: str
    updated_at: str
    subject_key: str | None = None
    expires_at: str | None = None
    expires: float | None = None
    keywords: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        """The name a model uses for it: ``project/<slug>`` or ``global/<slug>``."""
        return f"{self.scope}/{self.name}"

    @property
    def pinned(self) -> bool:
        return self.activation == "pinned"

    def expired(self, now: float) -> bool:
        return self.expires is not None and self.expires <= now

    def metadata(self) -> dict[str, Any]:
        """The front matter as written (empty optional keys left out)."""
        values: dict[str, Any] = {
            "id": self.id, "revision": self.revision, "created_at": self.created_at,
            "updated_at": self.updated_at, "name": self.name, "title": self.title,
            "description": self.description, "type": self.type, "scope": self.scope,
            "activation": self.activation, "subject_key": self.subject_key,
            "expires_at": self.expires_at, "keywords": list(self.keywords),
        }
        return {k: values[k] for k in KEYS if values[k] not in (None, [], "")}


@attrs.frozen
class Unreadable:
    """A fact file that could not be read, and why (shown by ``memory list``)."""

    name: str
    scope: str
    reason: str

    @property
    def ref(self) -> str:
        return f"{self.scope}/{self.name}"


# --- reading and writing ------------------------------------------------------------------


def parse_fact(text: str, *, name: str, scope: str) -> Fact:
    """The fact in ``text`` (a file's content); `BadFact` when it cannot be read."""
    import frontmatter
    import yaml

    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise BadFact(f"its front matter is not valid YAML{where}") from None
    meta: Mapping[str, Any] = post.metadata if isinstance(post.metadata, Mapping) else {}
    body = post.content.strip("\n")
    description = _text(meta.get("description")) or _first_line(body)
    title = _text(meta.get("title")) or name
    kind = _text(meta.get("type"))
    activation = _text(meta.get("activation"))
    expires_at = meta.get("expires_at")
    try:
        expires = parse_expiry(expires_at, hand_written=True)
    except BadFact as exc:
        raise BadFact(f"its expires_at is unusable ({exc})") from None
    return Fact(
        id=_text(meta.get("id")) or derived_id(scope, name),
        revision=_revision(meta.get("revision")),
        name=name, scope=scope, title=title, description=description,
        type=kind if kind in TYPES else DEFAULT_TYPE,
        activation=activation if activation in ACTIVATIONS else "relevant",
        body=body,
        created_at=_text(meta.get("created_at")), updated_at=_text(meta.get("updated_at")),
        subject_key=_text(meta.get("subject_key")) or None,
        expires_at=_text(expires_at) or None, expires=expires,
        keywords=_keywords(meta.get("keywords")),
    )


def render_fact(fact: Fact) -> bytes:
    """The file content for ``fact``: YAML front matter, a blank line, the body."""
    import frontmatter

    post = frontmatter.Post(fact.body, **fact.metadata())
    return (frontmatter.dumps(post, sort_keys=False) + "\n").encode("utf-8")


# --- values -----------------------------------------------------------------------------------


def now_stamp(now: float) -> str:
    """RFC 3339 UTC time to the second, as the front matter stores it."""
    return dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_id() -> str:
    return "m-" + uuid.uuid4().hex[:16]


def derived_id(scope: str, name: str) -> str:
    """A stable id for a hand-written fact file that has none."""
    return "m-" + hashlib.sha256(f"{scope}/{name}".encode()).hexdigest()[:16]


def slug_from(text: str) -> str:
    """A file-name slug from a title or description: lowercase words joined by ``-``."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > 48:
            break
        slug = candidate
    return slug or "fact"


def parse_expiry(value: Any, *, hand_written: bool = False) -> float | None:
    """Epoch seconds for an ``expires_at`` value; ``None`` for never.

    Accepts ``never``, an RFC 3339 date (``2026-05-01``: expires at 00:00 UTC that day) or
    date-time with an offset (``2026-05-01T12:00:00Z``). A hand-written file may also hold a
    YAML date or a date-time without offset (read as UTC).
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "never")):
        return None
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            try:
                day = dt.date.fromisoformat(text)
            except ValueError:
                raise BadFact(f"{text!r} is not a real date") from None
            moment = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
        else:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?"
                                r"([Zz]|[+-]\d{2}:\d{2})?", text):
                raise BadFact(f"{text!r} is not an RFC 3339 date or date-time, or never")
            try:
                moment = dt.datetime.fromisoformat(text.replace("z", "Z"))
            except ValueError:
                raise BadFact(f"{text!r} is not a real date-time") from None
            if moment.tzinfo is None and not hand_written:
                raise BadFact(f"{text!r} has no UTC offset (add Z or +hh:mm)")
    else:
        raise BadFact(f"{value!r} is not a date")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    return " ".join(str(value).split())


def _first_line(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:200]
    return ""


def _revision(value: Any) -> int:
    if isinstance(value, bool):
        return 1
    if isinstance(value, int) and value >= 1:
        return value
    if isinstance(value, str) and value.strip().isdigit() and int(value) >= 1:
        return int(value)
    return 1


def _keywords(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list | tuple):
        items = [str(v) for v in value if v is not None]
    else:
        return ()
    return tuple(dict.fromkeys(k.strip() for k in items if k.strip()))
