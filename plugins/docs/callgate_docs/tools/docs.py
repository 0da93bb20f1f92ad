"""The ``docs`` tool: search, read and list the documentation a session may consult."""

from __future__ import annotations

from typing import Any

from callgate import ToolContext, ToolError

from .._catalogue import Catalogue, build_catalogue, resolve_doc
from .._host_docs import host_docs_dir
from .._index import DocIndex, Hit, index_for
from .._sections import Section
from .specs import DEFAULT_LIMIT


def _catalogue(ctx: ToolContext) -> tuple[Catalogue, DocIndex]:
    config = ctx.config
    catalogue = build_catalogue(ctx.workspace, config)
    key = (str(host_docs_dir()), ctx.workspace.root, tuple(config.get("paths", ())),
           bool(config.get("host_docs", True)))
    index = index_for(key)
    index.sync(catalogue.files)
    return catalogue, index


def run_docs(ctx: ToolContext, args: dict[str, Any]) -> str:
    catalogue, index = _catalogue(ctx)
    operation = args["operation"]
    if operation == "search":
        query = (args.get("query") or "").strip()
        if not query:
            raise ToolError("invalid_arguments", "search needs query: what you want to know",
                            "DOCS_NO_QUERY")
        return render_search(query, index.search(query, args.get("limit", DEFAULT_LIMIT)))
    if operation == "read":
        if args.get("section_id"):
            return render_section(_section(ctx, catalogue, index, args["section_id"]))
        if args.get("path"):
            doc = resolve_doc(catalogue, ctx.workspace, args["path"])
            return render_outline(doc.label, index.sections(doc.label), index.problem(doc.label))
        raise ToolError("invalid_arguments", "read needs section_id (from search) or path (from "
                        "list)", "DOCS_NO_TARGET")
    return render_catalogue(catalogue, index)


def _section(ctx: ToolContext, catalogue: Catalogue, index: DocIndex, section_id: str) -> Section:
    path, sep, _anchor = section_id.strip().partition("#")
    if not sep:
        raise ToolError("invalid_arguments", f"{section_id!r} is not a section id (<document>#"
                        "<section>); read with path lists a document's ids", "DOCS_BAD_SECTION")
    doc = resolve_doc(catalogue, ctx.workspace, path)
    wanted = f"{doc.label}#{_anchor}"
    section = index.section(wanted)
    if section is None:
        raise ToolError("not_found", f"{doc.label} has no section {_anchor!r}; read with path "
                        f"{doc.label} lists its sections", "DOCS_NO_SECTION")
    return section


def render_search(query: str, hits: list[Hit]) -> str:
    if not hits:
        return (f"No documentation section matches {query!r}. Try other words (a config key, "
                "a tool or hook name, an error kind), fewer words, or docs list.")
    lines = [f"{len(hits)} section{'s' if len(hits) != 1 else ''} match {query!r}, best first:"]
    for n, hit in enumerate(hits, 1):
        s = hit.section
        lines.append(f"{n}. {s.id} — {s.trail} (lines {s.start_line}-{s.end_line})")
        if hit.snippet:
            lines.append(f"   > {hit.snippet}")
    lines.append("Read one with docs read and its section_id.")
    return "\n".join(lines)


def render_section(section: Section) -> str:
    return (f"source: {section.doc} lines {section.start_line}-{section.end_line} "
            f"({section.trail})\nsection_id: {section.id}\n\n{section.text}")


def render_outline(label: str, sections: list[Section], problem: str | None) -> str:
    if problem:
        return f"{label}: {problem}"
    if not sections:
        return f"{label} has no sections."
    lines = [f"{label}: {len(sections)} sections"]
    lines += [f"- {s.id} — {'  ' * max(0, s.level - 1)}{s.heading} (lines {s.start_line}-"
              f"{s.end_line})" for s in sections]
    return "\n".join(lines)


def render_catalogue(catalogue: Catalogue, index: DocIndex) -> str:
    groups = (("callgate", "callgate's own documentation"),
              ("project", "this project's documentation ([docs] paths)"))
    lines: list[str] = []
    for origin, title in groups:
        docs = [d for d in catalogue.files if d.origin == origin]
        if not docs:
            continue
        lines.append(f"{title}:")
        for doc in docs:
            sections = index.sections(doc.label)
            name = sections[0].heading if sections else ""
            problem = index.problem(doc.label)
            detail = problem or f"{len(sections)} section{'' if len(sections) == 1 else 's'}"
            lines.append(f"- {doc.label}{' — ' + name if name else ''} ({detail})")
    if not lines:
        lines.append("No documents are catalogued.")
    if catalogue.skipped:
        lines.append("skipped:")
        lines += [f"- {reason}" for reason in catalogue.skipped]
    return "\n".join(lines)
