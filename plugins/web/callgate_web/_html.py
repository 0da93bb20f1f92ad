"""HTML to readable markdown: BeautifulSoup cleans, markdownify converts.

No hand-written parsing: BeautifulSoup drops what a reader never sees (head,
scripts, styles, embeds, comments) and makes links absolute; markdownify turns
the rest into markdown (ATX headings, ``-`` bullets, fenced code, pipe tables).
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Comment, Declaration, Doctype, ProcessingInstruction
from markdownify import MarkdownConverter

REMOVED_TAGS = ("head", "title", "script", "style", "noscript", "template", "svg", "iframe",
                "object", "embed")
_CODE_TAGS = frozenset({"pre", "code"})
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
_BLANK_RUNS = re.compile(r"\n{3,}")
_SPACES = re.compile(r"\s+")


def _code_language(el: object) -> str:
    """The fence language of a ``<pre>`` from a ``language-x`` class on it or its ``<code>``."""
    for node in (el, getattr(el, "code", None)):
        classes = node.get("class") if node is not None and hasattr(node, "get") else None
        if classes:
            found = _LANGUAGE.search(" ".join(classes))
            if found:
                return found.group(1)
    return ""


_CONVERTER_OPTIONS = {
    "heading_style": "ATX",
    "bullets": "-",
    "autolinks": False,
    "escape_asterisks": False,
    "escape_underscores": False,
    "escape_misc": False,
    "table_infer_header": True,
    "code_language_callback": _code_language,
}


def _absolute(base_url: str, value: str) -> str:
    value = value.strip()
    if value.lower().startswith("data:"):
        # inline data (icons, embedded images) would be kilobytes of base64 for the model
        return value.split(",", 1)[0] + ",…"
    try:
        return urljoin(base_url, value)
    except ValueError:
        return value


def title_and_markdown(html: str, base_url: str) -> tuple[str, str]:
    """``(title, markdown)`` of an HTML document; links and images made absolute."""
    soup = BeautifulSoup(html, "html.parser")
    title_tag = soup.find("title")
    title = _SPACES.sub(" ", title_tag.get_text()).strip() if title_tag else ""
    for tag in soup.find_all(REMOVED_TAGS):
        tag.decompose()
    for node in soup.find_all(string=lambda s: isinstance(
            s, Comment | Declaration | Doctype | ProcessingInstruction)):
        node.extract()
    for attr in ("href", "src"):
        for tag in soup.find_all(attrs={attr: True}):
            value = tag.get(attr)
            if isinstance(value, str):
                tag[attr] = _absolute(base_url, value)
    for text in soup.find_all(string=lambda s: "\xa0" in s):
        if not any(parent.name in _CODE_TAGS for parent in text.parents):
            text.replace_with(text.replace("\xa0", " "))
    try:
        markdown = MarkdownConverter(**_CONVERTER_OPTIONS).convert_soup(soup)
    except RecursionError:
        # markdownify recurses once per nesting level; a page nested a few hundred
        # levels deep still gives its words (get_text walks the tree iteratively)
        markdown = "\n".join(line.strip() for line in soup.get_text("\n").splitlines())
    return title, tidy(markdown)


def tidy(markdown: str) -> str:
    """Strip trailing spaces, collapse 3+ newlines to 2, trim."""
    lines = "\n".join(line.rstrip() for line in markdown.replace("\r\n", "\n").split("\n"))
    return _BLANK_RUNS.sub("\n\n", lines).strip()


def render(html: str, base_url: str) -> str:
    """The text web_fetch returns for an HTML body (``Title:`` line first when there is one)."""
    title, markdown = title_and_markdown(html, base_url)
    if title:
        return f"Title: {title}\n\n{markdown or '(empty body)'}"
    return markdown
