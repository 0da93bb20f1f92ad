"""``docs`` as declared data: name, description, schema and flags, with its code named by
`callgate.deferred` (issue 38). Registering the plugin imports this module and neither the
catalogue nor the FTS5 index; ``tools/docs.py`` is imported by the first call."""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec, deferred

#: the default the schema declares (the tool's code applies it)
DEFAULT_LIMIT = 5

MAX_LIMIT = 10


DOCS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["operation"],
    "properties": {
        "operation": {"type": "string", "enum": ["search", "read", "list"],
                      "description": "search (ranked, needs query), read (a section by "
                                     "section_id, or a document's sections by path) or list "
                                     "(every document)."},
        "query": {"type": "string", "maxLength": 4096,
                  "description": "search: what you want to know, in a few words."},
        "section_id": {"type": "string", "maxLength": 600,
                       "description": "read: a section id from search or read, e.g. "
                                      "callgate:permissions.md#modes."},
        "path": {"type": "string", "maxLength": 500,
                 "description": "read: a document from docs list (callgate:<file>.md for "
                                "callgate's own docs, else its workspace path) to see its "
                                "sections."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                  "description": f"search: at most this many sections (default "
                                 f"{DEFAULT_LIMIT})."},
    },
}


DOCS_DESCRIPTION = (
    "Search and read documentation split into heading sections: callgate's own docs (how this "
    "tool host is configured: permissions, surfaces, config keys, tools, hooks) and the "
    "project's docs listed in [docs] paths. search ranks sections for a query; read returns "
    "one section with its source file and line range (or, with path alone, that document's "
    "section ids); list shows every document."
)


TOOLS = (
    ToolSpec(name="docs", description=DOCS_DESCRIPTION, schema=DOCS_SCHEMA,
             execute=deferred("callgate_docs.tools.docs:run_docs"), read_only=True,
             groups=("docs",)),
)
