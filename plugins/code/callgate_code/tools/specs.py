"""The code tools as declared data: names, descriptions (code_index's ``describe``, which
boot calls, lives here), schemas and flags, with their code named by `callgate.deferred`
(issue 38). Registering the plugin imports this module and none of tree-sitter, the grammars
or the parsers; a tool's module is imported by its first call, preview or validation."""

from __future__ import annotations

from typing import Any

from callgate import PermissionSubject, ToolSpec, deferred

# --- code_index ------------------------------------------------------------------------------
KINDS = ("func", "method", "class", "struct", "interface", "type", "enum", "trait", "const",
         "var")


DEFAULT_LIMIT = 100


MAX_LIMIT = 200


CODE_INDEX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"enum": ["outline", "search"],
                   "description": "outline: every symbol of the path; search: symbols whose "
                                  "name contains query."},
        "path": {"type": "string", "minLength": 1, "default": ".",
                 "description": "Source file or directory, relative to the workspace."},
        "query": {"type": "string", "minLength": 1,
                  "description": "For search: part of a symbol name (case-insensitive); "
                                 "Parent.name works too."},
        "kind": {"enum": list(KINDS), "description": "Only symbols of this kind."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                  "default": DEFAULT_LIMIT, "description": "Most symbols to list."},
    },
    "required": ["action"],
    "additionalProperties": False,
}


_LEAD = (
    "Built-in symbol index (tree-sitter) for Python, Go, JavaScript, TypeScript, Rust and "
    "Java. action=outline lists the functions, methods, classes and types of a file or "
    "directory with line numbers and signatures; action=search finds definitions whose name "
    "contains query, exact names first. It is a quick local fallback"
)


def describe(registered: frozenset[str], visible: frozenset[str]) -> str:
    """code_index's description on this host: it points to lsp_* tools and to read_file/grep
    only when they are registered."""
    text = _LEAD
    if any(name.startswith("lsp_") for name in registered):
        text += ": the language-server tools (lsp_*) know semantics better"
    text += ("; a code-graph MCP server, where one is configured, knows callers, impact and "
             "architecture.")
    confirm = [name for name in ("read_file", "grep") if name in registered]
    if confirm:
        text += f" Confirm what it returns with {' or '.join(confirm)}."
    return text


#: The description on a host with read_file and grep and no lsp_* tool.
CODE_INDEX_DESCRIPTION = describe(frozenset({"read_file", "grep"}), frozenset())


CODE_INDEX_SPEC = ToolSpec(
    name="code_index", description=CODE_INDEX_DESCRIPTION, describe=describe,
    schema=CODE_INDEX_SCHEMA, execute=deferred("callgate_code.tools.code_index:execute"),
    read_only=True, visibility="hidden",
    validate=deferred("callgate_code.tools.code_index:validate"),
    permission_subject=PermissionSubject("path", ("path",)))



# --- delete_symbol ---------------------------------------------------------------------------
KIND_NAMES = ("func", "function", "method", "class", "type", "struct", "interface", "const",
              "var", "assignment")


DELETE_SYMBOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1,
                 "description": "The .go, .py or .pyi file, relative to the workspace."},
        "name": {"type": "string", "minLength": 1,
                 "description": "The symbol's exact, case-sensitive name (no parent prefix)."},
        "kind": {"enum": list(KIND_NAMES),
                 "description": "Narrow to one kind when the name is ambiguous."},
        "parent": {"type": "string", "minLength": 1,
                   "description": "The receiver type (Go) or enclosing class (Python) of a "
                                  "method, when the name is ambiguous."},
    },
    "required": ["path", "name"],
    "additionalProperties": False,
}


DELETE_SYMBOL_DESCRIPTION = (
    "Remove one named definition (function, method, class, type, struct, interface, const or "
    "var) from a Go or Python file, found by parsing it: its doc comment or decorators go "
    "too, and the file must still parse afterwards. Returns a unified diff; an ambiguous name "
    "lists the candidates (pass kind and/or parent). Requires a current read of the file "
    "(any read_file window). For files in other languages, use delete_range with explicit "
    "anchors."
)


DELETE_SYMBOL_SPEC = ToolSpec(
    name="delete_symbol", description=DELETE_SYMBOL_DESCRIPTION, schema=DELETE_SYMBOL_SCHEMA,
    execute=deferred("callgate_code.tools.delete_symbol:execute"), read_only=False,
    visibility="hidden", mutates_paths=("path",),
    validate=deferred("callgate_code.tools.delete_symbol:validate"),
    preview=deferred("callgate_code.tools.delete_symbol:preview"),
    permission_subject=PermissionSubject("path", ("path",)), groups=("Edit",))
