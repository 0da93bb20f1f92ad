"""A Markdown document split into heading sections with markdown-it-py (CommonMark).

A section runs from its heading to the line before the next heading of any level; text
before the first heading is the document's preamble. Headings are found by the parser,
so a ``#`` inside a code block or a Setext heading is judged right. Section ids are
``<doc path>#<slug>`` with GitHub-style slugs, numbered when a slug repeats.
"""

from __future__ import annotations

import re
from functools import cache

import attrs


@attrs.frozen
class Section:
    """One heading section: where it is (1-based, inclusive lines) and what it says."""

    id: str
    doc: str
    heading: str
    trail: str
    parents: str
    level: int
    start_line: int
    end_line: int
    text: str


@cache
def _parser():  # type: ignore[no-untyped-def]
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def heading_slug(text: str) -> str:
    """GitHub's anchor rule: lowercase, punctuation dropped, spaces to ``-``."""
    slug = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return re.sub(r" ", "-", slug) or "section"


def split_sections(text: str, doc: str) -> list[Section]:
    """The sections of ``text`` (a document shown as ``doc``), in order."""
    lines = text.splitlines()
    tokens = _parser().parse(text)
    heads: list[tuple[int, int, str]] = []  # (first line index, level, heading text)
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            inline = tokens[i + 1] if i + 1 < len(tokens) else None
            heading = " ".join((inline.content if inline is not None else "").split())
            heads.append((token.map[0], int(token.tag[1:]), heading))
    sections: list[Section] = []
    seen: dict[str, int] = {}
    trail: list[tuple[int, str]] = []

    def add(start: int, end: int, level: int, heading: str, slug: str) -> None:
        body = "\n".join(lines[start:end]).strip("\n")
        if not body.strip():
            return
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        unique = slug if count == 0 else f"{slug}-{count}"
        path = " › ".join(h for _, h in trail) or heading
        parents = " › ".join(h for _, h in trail[:-1])
        sections.append(Section(f"{doc}#{unique}", doc, heading, path, parents, level,
                                start + 1, max(start + 1, end), body))

    first = heads[0][0] if heads else len(lines)
    if first > 0:
        trail.append((0, doc))
        add(0, first, 0, doc, "preamble")
        trail.clear()
    for n, (start, level, heading) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        while trail and trail[-1][0] >= level:
            trail.pop()
        trail.append((level, heading))
        add(start, _trim(lines, start, end), level, heading, heading_slug(heading))
    return sections


def _trim(lines: list[str], start: int, end: int) -> int:
    """``end`` moved up past trailing blank lines (a section's range ends on text)."""
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end
