"""The file tools as declared data: each tool's name, description, schema and flags, with its
code named by `callgate.deferred` (issue 38). Registering the plugin imports this module and
nothing of the tools' machinery; a tool's module in ``tools/`` is imported by its first call,
preview or validation (a module that fails to import fails those calls, naming the plugin)."""

from __future__ import annotations

from typing import Any

from callgate import PathRole, PermissionSubject, ToolSpec, deferred

from .._schemas import path_schema

# --- apply_patch ---------------------------------------------------------------------------

PATCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["patch"],
    "properties": {
        "patch": {"type": "string", "minLength": 1,
                  "description": "The whole patch, from '*** Begin Patch' to '*** End Patch'."},
    },
}


PATCH_DESCRIPTION = (
    "Add, update, move and delete files with one patch, applied all or nothing: if any "
    "hunk does not fit, no file changes. The patch:\n"
    "*** Begin Patch\n"
    "*** Add File: src/new.py\n"
    "+every line of the new file, each starting with +\n"
    "*** Update File: src/app.py\n"
    "*** Move to: src/main.py   (optional: rename it too)\n"
    "@@ def handler():   (optional text after @@: a line to find first)\n"
    " unchanged context line, starting with a space\n"
    "-line to remove\n"
    "+line to add\n"
    "*** Delete File: src/old.py\n"
    "*** End Patch\n"
    "Give about 3 lines of context around each change and a new @@ for each place in a "
    "file; context and removed lines must match the file (whitespace differences are "
    "tolerated). *** End of File after a hunk pins it to the end of the file. Paths are "
    "relative to the workspace. Updating, moving or deleting a file needs a current "
    "observation of it (any read_file window); Add File and Move to never replace an "
    "existing file. Files keep their encoding and line endings; an updated file ends with "
    "a newline. Returns the changed files and their diffs."
)


PATCH_SPEC = ToolSpec(
    name="apply_patch", description=PATCH_DESCRIPTION, schema=PATCH_SCHEMA,
    execute=deferred("callgate_files.tools.apply_patch:execute"),
    preview=deferred("callgate_files.tools.apply_patch:preview"),
    validate=deferred("callgate_files.tools.apply_patch:validate"),
    mutated_paths=deferred("callgate_files.tools.apply_patch:mutated_paths"),
    permission_subject=PermissionSubject("path", ()),
    groups=("Edit",), visibility="hidden",
    examples=({"patch": "*** Begin Patch\n*** Update File: src/app.py\n@@ def total(items):\n"
                        "-    return sum(items)\n+    return round(sum(items), 2)\n"
                        "*** Add File: src/notes.txt\n+first line\n*** End Patch\n"},),
)


# --- delete_range --------------------------------------------------------------------------

ANCHOR = {"type": "string", "minLength": 1, "pattern": "^[^\\r\\n]*$"}


DELETE_RANGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "start_anchor", "end_anchor"],
    "properties": {
        "path": path_schema("File to delete lines from: relative to the workspace, or "
                            "absolute."),
        "start_anchor": {**ANCHOR, "description": "The whole first line of the range, exactly "
                         "as in the file (indentation included)."},
        "end_anchor": {**ANCHOR, "description": "The whole last line of the range, exactly as "
                       "in the file."},
        "inclusive": {"type": "boolean", "default": True,
                      "description": "Delete the anchor lines too (false keeps them and deletes "
                      "only the lines between)."},
    },
}


DELETE_RANGE_DESCRIPTION = (
    "Delete a run of whole lines from a file, found by two anchors: the exact text of its "
    "first and last line, each of which must occur on exactly one line. Returns a unified "
    "diff of the deletion. Meant for large deletions; for smaller changes use edit_file. "
    "Needs a current observation of the file (any read_file window)."
)


DELETE_RANGE_SPEC = ToolSpec(
    name="delete_range", description=DELETE_RANGE_DESCRIPTION, schema=DELETE_RANGE_SCHEMA,
    execute=deferred("callgate_files.tools.delete_range:execute"),
    preview=deferred("callgate_files.tools.delete_range:preview"),
    mutates_paths=(PathRole("path"),),
    permission_subject=PermissionSubject("path", ("path",)),
    groups=("Edit",), visibility="hidden",
)


# --- edit_file -----------------------------------------------------------------------------

#: what other agents and plain words call these tools (an unknown call by one of
#: these names is answered "did you mean" the tool)
EDIT_FILE_KNOWN_AS = (
    "Edit", "str_replace", "replace", "str_replace_editor", "replace_in_file", "search_replace",
    "apply_diff", "str_replace_based_edit_tool",
)


MULTI_EDIT_KNOWN_AS = ("MultiEdit",)


EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "old_string", "new_string"],
    "properties": {
        "path": path_schema("File to edit: relative to the workspace, or absolute."),
        "old_string": {"type": "string", "minLength": 1,
                       "description": "Text to replace, copied exactly from the file."},
        "new_string": {"type": "string", "description": "Replacement text (\"\" deletes)."},
        "replace_all": {"type": "boolean", "default": False,
                        "description": "Replace every match instead of requiring one."},
    },
}


EDIT_DESCRIPTION = (
    "Replace one exact piece of text in a file with another. old_string must match exactly "
    "one place (set replace_all to change every match); when it matches several, add "
    "surrounding lines to make it unique. Copy old_string from read_file output without the "
    "line-number prefixes, indentation included. Needs a current observation of the file "
    "(any read_file window); consecutive edits need no re-read. Prefer this to rewriting a "
    "whole file."
)


MULTI_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "edits"],
    "properties": {
        "path": path_schema("File to edit: relative to the workspace, or absolute."),
        "edits": {
            "type": "array", "minItems": 1, "maxItems": 100,
            "description": "Edits applied in order, each to the result of the previous one.",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["old_string", "new_string"],
                "properties": {
                    "old_string": {"type": "string", "minLength": 1},
                    "new_string": {"type": "string"},
                    "replace_all": {"type": "boolean", "default": False},
                },
            },
        },
    },
}


MULTI_DESCRIPTION = (
    "Apply several edits to one file as a single change: each edit works on the result of "
    "the one before, all in memory, and the file is written only if every edit succeeds. "
    "Each edit matches like edit_file. Cheaper and safer than a chain of edit_file calls: a "
    "failing third edit leaves the file exactly as it was instead of half edited."
)


EDIT_SPEC = ToolSpec(
    name="edit_file", known_as=EDIT_FILE_KNOWN_AS, description=EDIT_DESCRIPTION, schema=EDIT_SCHEMA,
    execute=deferred("callgate_files.tools.edit_file:execute_edit"),
    preview=deferred("callgate_files.tools.edit_file:preview_edit"),
    validate=deferred("callgate_files.tools.edit_file:validate_edit"),
    mutates_paths=(PathRole("path"),),
    permission_subject=PermissionSubject("path", ("path",)),
    groups=("Edit",), visibility="surface", surface_order=40,
    examples=({"path": "src/app.py", "old_string": "    return total\n",
               "new_string": "    return round(total, 2)\n"},
              {"path": "README.md", "old_string": "colour", "new_string": "color",
               "replace_all": True}),
)


MULTI_SPEC = ToolSpec(
    name="multi_edit", description=MULTI_DESCRIPTION, schema=MULTI_SCHEMA,
    known_as=MULTI_EDIT_KNOWN_AS,
    execute=deferred("callgate_files.tools.edit_file:execute_multi"),
    preview=deferred("callgate_files.tools.edit_file:preview_multi"),
    validate=deferred("callgate_files.tools.edit_file:validate_multi"),
    mutates_paths=(PathRole("path"),),
    permission_subject=PermissionSubject("path", ("path",)),
    groups=("Edit",), visibility="hidden",
    examples=({"path": "src/app.py", "edits": [
        {"old_string": "import os\n", "new_string": "import os\nimport sys\n"},
        {"old_string": "print(x)", "new_string": "print(x, file=sys.stderr)",
         "replace_all": True}]},),
)


# --- insert_lines --------------------------------------------------------------------------

INSERT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "line", "text"],
    "properties": {
        "path": path_schema("File to insert into: relative to the workspace, or absolute."),
        "line": {"type": "integer", "minimum": 0, "maximum": 100_000_000,
                 "description": "Insert after this line (0: at the start of the file)."},
        "text": {"type": "string", "minLength": 1, "description": "The lines to insert."},
    },
}


INSERT_DESCRIPTION = (
    "Insert text after a line of a file (line 0: at the start). The file keeps its "
    "encoding and line endings. Needs a current observation of the file (any read_file "
    "window). Returns a unified diff."
)


INSERT_SPEC = ToolSpec(
    name="insert_lines", description=INSERT_DESCRIPTION, schema=INSERT_SCHEMA,
    execute=deferred("callgate_files.tools.insert_lines:execute"),
    preview=deferred("callgate_files.tools.insert_lines:preview"),
    mutates_paths=(PathRole("path"),),
    permission_subject=PermissionSubject("path", ("path",)),
    groups=("Edit",), visibility="hidden",
)


# --- move_file -----------------------------------------------------------------------------

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
MOVE_FILE_KNOWN_AS = ("move", "mv", "rename", "rename_file")


MOVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["source_path", "destination_path"],
    "properties": {
        "source_path": path_schema("The file to move."),
        "destination_path": path_schema("Its new path; missing parent directories are "
                                        "created. An existing file there is never replaced."),
    },
}


#: what the host gate advises when a path is a directory or not a regular file
REGULAR = "move_file moves regular files; use the shell"


MOVE_DESCRIPTION = (
    "Move or rename a file from source_path to destination_path, creating the destination's "
    "parent directories as needed; an existing destination is never overwritten. Use this "
    "instead of mv, Move-Item or ren in the shell, so workspace confinement and edit "
    "permissions apply. Needs a current observation of the source (any read_file window)."
)


MOVE_SPEC = ToolSpec(
    name="move_file", description=MOVE_DESCRIPTION, schema=MOVE_SCHEMA,
    execute=deferred("callgate_files.tools.move_file:execute"),
    preview=deferred("callgate_files.tools.move_file:preview"),
    known_as=MOVE_FILE_KNOWN_AS,
    mutates_paths=(PathRole("source_path", "modify", follow_symlinks=False, recovery=REGULAR),
                   PathRole("destination_path", "create", follow_symlinks=False,
                            recovery=REGULAR)),
    permission_subject=PermissionSubject("path", ("source_path", "destination_path")),
    groups=("Edit",), visibility="hidden",
)


# --- notebook_edit -------------------------------------------------------------------------

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
NOTEBOOK_EDIT_KNOWN_AS = ("NotebookEdit", "edit_notebook")


NOTEBOOK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path"],
    "properties": {
        "path": path_schema("The .ipynb notebook: relative to the workspace, or absolute."),
        "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"],
                      "default": "replace", "description": "What to do with the cell."},
        "cell_number": {"type": "integer", "minimum": -1,
                        "description": "0-based cell index; for insert, the new cell goes "
                        "after it (-1: at the top)."},
        "cell_id": {"type": "string", "description": "The cell's id (wins over cell_number)."},
        "cell_type": {"type": "string", "enum": ["code", "markdown"],
                      "description": "Type of the new cell (required for insert; retypes on "
                      "replace)."},
        "new_source": {"type": "string", "description": "The cell's new source (may be "
                       "empty)."},
    },
}


NOTEBOOK_DESCRIPTION = (
    "Edit one cell of a Jupyter notebook (.ipynb). Pick the cell by its 0-based cell_number "
    "or its cell_id. edit_mode \"replace\" (the default) sets the cell's source; \"insert\" "
    "adds a new cell after cell_number (-1 puts it at the top) and needs cell_type and "
    "new_source; \"delete\" removes the cell. cell_type is \"code\" or \"markdown\". A code "
    "cell that is edited loses its outputs. Prefer this to edit_file for notebooks: the "
    "result is checked to be a valid notebook before it is written."
)


NOTEBOOK_SPEC = ToolSpec(
    name="notebook_edit", known_as=NOTEBOOK_EDIT_KNOWN_AS,
    description=NOTEBOOK_DESCRIPTION, schema=NOTEBOOK_SCHEMA,
    execute=deferred("callgate_files.tools.notebook_edit:execute"),
    preview=deferred("callgate_files.tools.notebook_edit:preview"),
    validate=deferred("callgate_files.tools.notebook_edit:validate"),
    mutates_paths=(PathRole("path"),),
    permission_subject=PermissionSubject("path", ("path",)),
    groups=("Edit",), visibility="hidden",
)


# --- read_file -----------------------------------------------------------------------------

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
READ_FILE_KNOWN_AS = ("Read", "view", "cat", "open_file", "read_many_files", "view_file")


DEFAULT_LIMIT = 2000


READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path"],
    "properties": {
        "path": path_schema("File to read: relative to the workspace, or absolute."),
        "offset": {"type": "integer", "minimum": 0, "default": 0,
                   "description": "Lines to skip before the window (0 starts at line 1)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10000, "default": DEFAULT_LIMIT,
                  "description": "Most lines to return."},
        "intent": {"type": "string",
                   "description": "Legacy navigation hint; accepted and ignored."},
        "cursor": {"type": "string",
                   "description": "Legacy navigation hint; accepted and ignored."},
        "encoding": {"type": "string", "minLength": 1, "maxLength": 64,
                     "description": "The file's encoding (gb18030, cp1251, shift_jis...), "
                                    "when a read said it could not tell it or only guessed "
                                    "it: the file is read in it, and edits of the version "
                                    "read keep it."},
    },
}


READ_DESCRIPTION = (
    "Read a window of a text file: up to `limit` lines starting after `offset`, each prefixed "
    "with its 1-based line number. Any successful window records the file's current version, "
    "which is all a later edit needs: there is no need to read the whole file first. When "
    "more lines follow, the result ends with the offset to continue from; page on only if "
    "the rest is useful. When a read says the file's encoding could not be told or was "
    "only guessed and you know it, read again with `encoding`: that version is then read "
    "and edited in it. The legacy `intent` and `cursor` fields are accepted as hints and "
    "change nothing."
)


READ_SPEC = ToolSpec(name="read_file", description=READ_DESCRIPTION, schema=READ_SCHEMA,
                execute=deferred("callgate_files.tools.read_file:execute"),
                known_as=READ_FILE_KNOWN_AS,
                validate=deferred("callgate_files.tools.read_file:validate"), read_only=True,
                visibility="surface", surface_order=50,
                permission_subject=PermissionSubject("path", ("path",)))


# --- write_file ----------------------------------------------------------------------------

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
WRITE_FILE_KNOWN_AS = ("Write", "create", "create_file", "write_to_file", "new_file")


WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "content"],
    "properties": {
        "path": path_schema("File to create or replace: relative to the workspace, or "
                            "absolute."),
        "content": {"type": "string", "description": "The complete new content (may be empty)."},
    },
}


WRITE_DESCRIPTION = (
    "Create a text file, or replace the whole content of one. A new file is created without "
    "ever overwriting a file someone else created meanwhile. Replacing an existing file "
    "needs a current observation of it in this session: a read_file window or an earlier "
    "successful edit. The file keeps its encoding, BOM and CRLF line endings (a file whose "
    "encoding was only guessed is written as UTF-8). For a change to part of a file, "
    "edit_file is cheaper and safer."
)


WRITE_SPEC = ToolSpec(
    name="write_file", known_as=WRITE_FILE_KNOWN_AS, description=WRITE_DESCRIPTION,
    schema=WRITE_SCHEMA,
    execute=deferred("callgate_files.tools.write_file:execute"),
    preview=deferred("callgate_files.tools.write_file:preview"),
    mutates_paths=(PathRole("path", "create_or_modify"),),
    permission_subject=PermissionSubject("path", ("path",)),
    groups=("Edit",), visibility="surface", surface_order=70,
)
