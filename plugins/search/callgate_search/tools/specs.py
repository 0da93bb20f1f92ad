"""The search tools as declared data: names, descriptions, schemas and flags, with their code
named by `callgate.deferred` (issue 38). Registering the plugin imports this module and none
of the engines, the walker or the matchers; a tool's module is imported by its first call."""

from __future__ import annotations

from typing import Any

from callgate import PermissionSubject, ToolSpec, deferred

#: the limits the schemas declare (the tools' code enforces them)
MAX_MATCHES = 200
MAX_CONTEXT = 10
MAX_ENTRIES = 5000

# --- grep --------------------------------------------------------------------------------------
#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
GREP_KNOWN_AS = (
    "Grep", "search", "search_files", "find_in_files", "rg", "ripgrep", "codebase_search",
    "grep_search", "search_file_content",
)


GREP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1,
                    "description": "Regular expression in Python re syntax, matched against "
                                   "each line. No look-around, backreferences or newlines."},
        "path": {"type": "string", "minLength": 1, "default": ".",
                 "description": "File or directory to search, relative to the workspace."},
        "glob": {"type": "string", "minLength": 1,
                 "description": "Only search files matching this glob: without '/' it matches "
                                "file names at any depth (*.py, *.{ts,tsx}); with '/' the "
                                "workspace-relative path (src/**/*.ts). A leading ! leaves "
                                "the matching files out instead (!*.min.js)."},
        "case_insensitive": {"type": "boolean", "default": False,
                             "description": "Match letters regardless of case."},
        "context": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "default": 0,
                    "description": "Lines of context to show before and after each match."},
        "max_matches": {"type": "integer", "minimum": 1, "maximum": MAX_MATCHES,
                        "default": MAX_MATCHES,
                        "description": "Stop after this many matching lines."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


#: ``structuredContent`` (MCP): the matching lines as data.
GREP_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "matches": {"type": "array", "items": {
            "type": "object",
            "properties": {"path": {"type": "string"},
                           "line": {"type": "integer", "minimum": 1},
                           "text": {"type": "string",
                                    "description": "The line as printed (a long one cut)."}},
            "required": ["path", "line", "text"]}},
        "truncated": {"type": "boolean"},
        "timed_out": {"type": "boolean"},
    },
    "required": ["matches", "truncated", "timed_out"],
}


GREP_DESCRIPTION = (
    "Search file contents for a regular expression (Python re syntax, matched line by line) "
    "in one file or recursively under a workspace directory. While walking, hidden files "
    "(unless a .gitignore ! rule re-includes them), .gitignore'd files, binary files and "
    "dependency folders such as node_modules are left out; naming a file or folder in path "
    "searches it anyway. Each matching line prints as "
    "path:line:text in path order, up to 200; glob narrows the files, case_insensitive and "
    "context widen the match. Searches that do not depend on each other's results belong "
    "together in one round."
)


def grep_spec(rg: str | None) -> ToolSpec:
    """``grep``, run by ``rg`` when one was found at boot, else by the Python engine."""
    return ToolSpec(
        name="grep", description=GREP_DESCRIPTION, schema=GREP_SCHEMA,
        execute=deferred("callgate_search.tools.grep:run", rg),
        known_as=GREP_KNOWN_AS,
        output_schema=GREP_OUTPUT_SCHEMA, read_only=True, visibility="hidden",
        validate=deferred("callgate_search.tools.grep:validate"),
        permission_subject=PermissionSubject("pattern", ("pattern",)),
        examples=({"pattern": r"def \w+_handler\(", "glob": "*.py", "context": 2},
                  {"pattern": "todo", "path": "src", "case_insensitive": True}))




# --- glob --------------------------------------------------------------------------------------
#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
GLOB_KNOWN_AS = ("Glob", "find", "find_files", "file_search", "glob_files")


GLOB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1,
                    "description": "Glob such as *.go, src/**/*.ts or *.{py,pyi}. Without '/' "
                                   "it matches file names at any depth; with '/' the whole "
                                   "path below path."},
        "path": {"type": "string", "minLength": 1, "default": ".",
                 "description": "Directory to search from, relative to the workspace."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


GLOB_DESCRIPTION = (
    "Find workspace files by glob pattern, e.g. \"*.go\", \"cmd/*/main.go\" or "
    "\"**/*_test.py\". * and ? stay within one path segment, [...] is a character class, "
    "{a,b} alternates and ** spans any number of directories; matching is case-sensitive. "
    "Without '/' a pattern matches file names at any depth; a leading ! is refused (write "
    "the pattern of the files wanted). Prints files only (hidden and "
    "gitignored ones too; .git, node_modules and similar folders only when the pattern starts "
    "with them), one workspace-relative path per line in path order, up to 1000. Send globs "
    "that do not depend on each other in one round."
)


#: ``structuredContent`` (MCP): the matching paths as data.
GLOB_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "files": {"type": "array", "items": {"type": "string"},
                  "description": "Matching files, workspace-relative, in path order."},
        "truncated": {"type": "boolean"},
        "timed_out": {"type": "boolean"},
    },
    "required": ["files", "truncated", "timed_out"],
}


GLOB_SPEC = ToolSpec(
    name="glob", known_as=GLOB_KNOWN_AS, description=GLOB_DESCRIPTION, schema=GLOB_SCHEMA,
    execute=deferred("callgate_search.tools.glob:execute"),
    output_schema=GLOB_OUTPUT_SCHEMA, read_only=True, visibility="hidden",
    validate=deferred("callgate_search.tools.glob:validate"),
    permission_subject=PermissionSubject("pattern", ("pattern",)))




# --- ls ----------------------------------------------------------------------------------------
#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
LS_KNOWN_AS = ("LS", "list", "list_dir", "list_directory", "list_files", "dir")


LS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "default": ".",
                 "description": "Directory to list, relative to the workspace."},
        "recursive": {"type": "boolean", "default": False,
                      "description": "List every nested entry depth first, with "
                                     "workspace-relative paths."},
    },
    "additionalProperties": False,
}


_ENTRY = {
    "type": "object",
    "properties": {
        "path": {"type": "string",
                 "description": "As listed: the name (flat) or the workspace-relative path "
                                "(recursive)."},
        "type": {"enum": ["file", "directory", "symlink", "other"]},
        "size": {"type": "integer", "minimum": 0, "description": "A file's size in bytes."},
        "target": {"type": "string", "description": "A symlink's target (not followed)."},
    },
    "required": ["path", "type"],
}


#: ``structuredContent`` (MCP): the entries as data, beside the text the model reads.
LS_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entries": {"type": "array", "items": _ENTRY},
        "truncated": {"type": "boolean",
                      "description": f"More than {MAX_ENTRIES} entries: the rest not listed."},
        "timed_out": {"type": "boolean"},
    },
    "required": ["entries", "truncated", "timed_out"],
}


LS_DESCRIPTION = (
    "List a workspace directory sorted by name: directories end with '/', files are followed "
    "by a tab and their size in bytes, symlinks show their target (not followed). "
    "recursive=true walks nested folders depth-first and prints workspace-relative paths, "
    "showing but not entering .git, node_modules and similar folders; up to 5000 entries. "
    "Listings that do not depend on each other belong together in one round."
)


LS_SPEC = ToolSpec(
    name="ls", known_as=LS_KNOWN_AS, description=LS_DESCRIPTION, schema=LS_SCHEMA,
    execute=deferred("callgate_search.tools.ls:execute"),
    output_schema=LS_OUTPUT_SCHEMA, read_only=True, visibility="hidden",
    permission_subject=PermissionSubject("path", ("path",)))
