"""The documents one session may search: callgate's own docs and ``[docs] paths``.

Configured paths are confined like every file tool's: each entry, and each file found
under a directory entry, must resolve (symlinks followed) inside the workspace's read
roots, or it is skipped and ``docs list`` says why. Only Markdown files are catalogued.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
from callgate import ToolError
from callgate.paths import PRUNE

from ._host_docs import host_docs_dir

HOST_PREFIX = "callgate:"
SUFFIXES = (".md", ".markdown")
MAX_FILES = 2000
MAX_FILE_BYTES = 1 << 20


@attrs.frozen
class DocFile:
    """One catalogued document: the name tools show (``label``) and its canonical path."""

    label: str
    path: str
    origin: str  # "callgate" or "project"


@attrs.frozen
class Catalogue:
    files: tuple[DocFile, ...]
    skipped: tuple[str, ...]

    def by_label(self, label: str) -> DocFile | None:
        for doc in self.files:
            if doc.label == label:
                return doc
        return None


def build_catalogue(workspace: Any, config: dict[str, Any]) -> Catalogue:
    files: list[DocFile] = []
    skipped: list[str] = []
    if config.get("host_docs", True):
        root = host_docs_dir()
        if root is None:
            skipped.append("callgate's own docs: not found in this installation")
        else:
            for path in _markdown_under(str(root)):
                rel = Path(path).relative_to(root).as_posix()
                files.append(DocFile(HOST_PREFIX + rel, path, "callgate"))
    for entry in config.get("paths", ()):
        _add_configured(workspace, entry, files, skipped)
    unique = list({d.label: d for d in files}.values())
    if len(unique) > MAX_FILES:
        skipped.append(f"{len(unique) - MAX_FILES} more documents past the {MAX_FILES} limit")
        unique = unique[:MAX_FILES]
    return Catalogue(tuple(unique), tuple(skipped))


def _add_configured(workspace: Any, entry: str, files: list[DocFile],
                    skipped: list[str]) -> None:
    try:
        resolved = workspace.resolve(entry)
    except ToolError:
        skipped.append(f"{entry}: outside the workspace")
        return
    if os.path.isfile(resolved.path):
        files.append(DocFile(resolved.display, resolved.path, "project"))
        return
    if not os.path.isdir(resolved.path):
        skipped.append(f"{entry}: not found")
        return
    for path in _markdown_under(resolved.lexical):
        try:
            inner = workspace.resolve(path)
        except ToolError:
            skipped.append(f"{workspace.display(path)}: leads outside the workspace")
            continue
        if os.path.isfile(inner.path):
            files.append(DocFile(inner.display, inner.path, "project"))


def _markdown_under(root: str) -> list[str]:
    found: list[str] = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in PRUNE and not d.startswith("."))
        found += [os.path.join(directory, n) for n in sorted(names)
                  if n.lower().endswith(SUFFIXES) and not n.startswith(".")]
        if len(found) > MAX_FILES:
            break
    return found


def resolve_doc(catalogue: Catalogue, workspace: Any, path: str) -> DocFile:
    """The catalogued document ``path`` names (a label), confined like a file tool's path."""
    text = path.strip()
    if text.startswith(HOST_PREFIX):
        rel = text[len(HOST_PREFIX):]
        if ".." in Path(rel).parts or os.path.isabs(rel) or "\\" in rel:
            raise ToolError("outside_workspace",
                            f"{text}: callgate's docs are named callgate:<file>.md, without .. "
                            "or absolute parts (docs list shows them)", "DOCS_BAD_PATH")
        found = catalogue.by_label(text)
    else:
        resolved = workspace.resolve(text)  # raises outside_workspace for ../ and the like
        found = next((d for d in catalogue.files if d.path == resolved.path), None)
    if found is None:
        raise ToolError("not_found",
                        f"{text} is not a catalogued document; docs list shows them (a "
                        "project's documents are catalogued through [docs] paths)",
                        "DOCS_NOT_FOUND")
    return found
