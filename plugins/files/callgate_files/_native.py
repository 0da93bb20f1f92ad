"""The file tools' provider-native faces (issue 32): Anthropic's text editor, OpenAI's
``apply_patch`` (Responses) and the freeform ``apply_patch`` custom tool (Chat
Completions). Each maps the provider's call onto the canonical file tools, which run
through the same gates as any call, and their results back onto the provider's result.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from callgate import ToolResult
from callgate.native import NativeFace, NativeInputError

EDITOR = "str_replace_based_edit_tool"
#: the canonical tools the native editors stand in for
EDIT_TOOLS = ("read_file", "write_file", "edit_file", "multi_edit", "delete_range", "insert_lines")
PATCH_TOOLS = ("write_file", "edit_file", "multi_edit", "delete_range", "move_file",
               "apply_patch")

# --- Anthropic text_editor_20250728 ------------------------------------------------------

_NUMBERED = re.compile(r"^ *(\d+)→", re.MULTILINE)
_CONTINUE = re.compile(r"call read_file with offset=(\d+) to continue")


def _need(value: Mapping[str, Any], command: str, *keys: str) -> None:
    missing = [k for k in keys if k not in value]
    if missing:
        raise NativeInputError(
            f"{EDITOR} {command} needs {', '.join(keys)}; missing: {', '.join(missing)}")


def _is_directory(session: Any, path: Any) -> bool:
    if not isinstance(path, str) or not path:
        return False
    try:  # confinement first: a path outside the workspace goes to read_file to be refused
        resolved = session.workspace.resolve(path)
    except Exception:
        return False
    return os.path.isdir(resolved.path)


def _editor_calls(item: Mapping[str, Any], session: Any) -> list[tuple[str, Any]]:
    value = item.get("input")
    if not isinstance(value, Mapping):
        raise NativeInputError(f"{EDITOR}: input must be an object with a command")
    command = value.get("command")
    if command == "view":
        _need(value, "view", "path")
        path = value["path"]
        if _is_directory(session, path):
            return [("ls", {"path": path})]
        arguments: dict[str, Any] = {"path": path}
        window = value.get("view_range")
        if window is not None:
            if (not isinstance(window, list) or len(window) != 2
                    or not all(isinstance(n, int) and not isinstance(n, bool) for n in window)
                    or window[0] < 1 or (window[1] != -1 and window[1] < window[0])):
                raise NativeInputError(
                    f"{EDITOR} view: view_range must be [start, end] with 1 <= start <= end "
                    "(end -1: to the end of the file)")
            arguments["offset"] = window[0] - 1
            if window[1] != -1:
                arguments["limit"] = window[1] - window[0] + 1
        return [("read_file", arguments)]
    if command == "str_replace":
        _need(value, "str_replace", "path", "old_str", "new_str")
        return [("edit_file", {"path": value["path"], "old_string": value["old_str"],
                               "new_string": value["new_str"]})]
    if command == "create":
        _need(value, "create", "path", "file_text")
        return [("write_file", {"path": value["path"], "content": value["file_text"]})]
    if command == "insert":
        text_key = "new_str" if "new_str" in value else "insert_text"
        _need(value, "insert", "path", "insert_line", text_key)
        return [("insert_lines", {"path": value["path"], "line": value["insert_line"],
                                  "text": value[text_key]})]
    if command == "undo_edit":
        raise NativeInputError(f"{EDITOR}: undo_edit is not part of text_editor_20250728; "
                               "make the reverse change with str_replace")
    raise NativeInputError(f"{EDITOR}: unknown command {command!r}; use view, str_replace, "
                           "create or insert")


def _view_text(text: str) -> str:
    """read_file's ``12→text`` lines as the editor's ``12: text``, and its advice in the
    editor's words."""
    text = _NUMBERED.sub(r"\1: ", text)
    return _CONTINUE.sub(lambda m: f"view with view_range [{int(m.group(1)) + 1}, -1] "
                         "to continue", text)


def _editor_answer(item: Mapping[str, Any], results: Sequence[ToolResult]) -> dict[str, Any]:
    [result] = results
    if result.name == "read_file" and not result.is_error:
        from callgate.results import TextBlock

        result.content = [TextBlock(_view_text(b.text)) if isinstance(b, TextBlock) else b
                          for b in result.content]
    result.call_id = str(item.get("id") or result.call_id or "")
    from callgate_providers import render_result  # here: boot need not load the renderings

    return render_result(result, "anthropic")  # type: ignore[no-any-return]


TEXT_EDITOR = NativeFace(
    rendering="anthropic-native",
    entry={"type": "text_editor_20250728", "name": EDITOR},
    replaces=EDIT_TOOLS,
    shows=("ls", "insert_lines"),
    handles=lambda item: item.get("type") == "tool_use" and item.get("name") == EDITOR,
    calls=_editor_calls,
    answer=_editor_answer,
)

# --- OpenAI apply_patch (Responses) --------------------------------------------------------


def _added(diff: str) -> str:
    """A create_file diff as ``+`` lines (the model may send them prefixed or not)."""
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if lines and all(line.startswith("+") for line in lines):
        return "".join(line + "\n" for line in lines)
    return "".join("+" + line + "\n" for line in lines)


def patch_of(operation: Any) -> str:
    """An ``apply_patch_call`` operation as the one-file V4A patch ``apply_patch`` takes."""
    if not isinstance(operation, Mapping):
        raise NativeInputError("apply_patch_call: operation must be an object "
                               "{type: create_file|update_file|delete_file, path, diff}")
    kind, path = operation.get("type"), operation.get("path")
    if not isinstance(path, str) or not path or "\n" in path:
        raise NativeInputError("apply_patch_call: operation.path must be a one-line path")
    if kind == "delete_file":
        return f"*** Begin Patch\n*** Delete File: {path}\n*** End Patch\n"
    diff = operation.get("diff")
    if not isinstance(diff, str):
        raise NativeInputError(f"apply_patch_call: {kind} needs a diff (a string)")
    if kind == "create_file":
        return f"*** Begin Patch\n*** Add File: {path}\n{_added(diff)}*** End Patch\n"
    if kind == "update_file":
        body = diff if diff.endswith("\n") else diff + "\n"
        return f"*** Begin Patch\n*** Update File: {path}\n{body}*** End Patch\n"
    raise NativeInputError(f"apply_patch_call: unknown operation type {kind!r}; use "
                           "create_file, update_file or delete_file")


def _patch_answer(item: Mapping[str, Any], results: Sequence[ToolResult]) -> dict[str, Any]:
    [result] = results
    return {"type": "apply_patch_call_output", "call_id": str(item.get("call_id") or ""),
            "status": "failed" if result.is_error else "completed", "output": result.text}


APPLY_PATCH = NativeFace(
    rendering="openai-responses-native",
    entry={"type": "apply_patch"},
    replaces=PATCH_TOOLS,
    shows=("apply_patch",),
    handles=lambda item: item.get("type") == "apply_patch_call",
    calls=lambda item, session: [("apply_patch", {"patch": patch_of(item.get("operation"))})],
    answer=_patch_answer,
)

# --- the freeform apply_patch custom tool (Chat Completions) ------------------------------

#: Codex's apply_patch grammar (openai/codex tool_apply_patch.lark): the model's output is
#: held to the patch envelope as it is generated
GRAMMAR = r"""start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"""

FREEFORM_DESCRIPTION = (
    "Edit files with a patch: '*** Begin Patch', then per file '*** Add File: PATH' (lines "
    "starting with +), '*** Delete File: PATH' or '*** Update File: PATH' (optional "
    "'*** Move to: PATH') with @@ hunks of ' ' context, '-' removed and '+' added lines, "
    "then '*** End Patch'. All or nothing; updating a file needs a current read of it."
)


def _custom(item: Mapping[str, Any]) -> Mapping[str, Any]:
    custom = item.get("custom")
    return custom if isinstance(custom, Mapping) else {}


def _freeform_calls(item: Mapping[str, Any], session: Any) -> list[tuple[str, Any]]:
    patch = _custom(item).get("input")
    if not isinstance(patch, str):
        raise NativeInputError("apply_patch: the custom tool input must be the patch text")
    return [("apply_patch", {"patch": patch})]


def _freeform_answer(item: Mapping[str, Any], results: Sequence[ToolResult]) -> dict[str, Any]:
    [result] = results
    return {"role": "tool", "tool_call_id": str(item.get("id") or ""), "content": result.text}


FREEFORM_PATCH = NativeFace(
    rendering="openai-chat-freeform",
    entry={"type": "custom", "custom": {
        "name": "apply_patch", "description": FREEFORM_DESCRIPTION,
        "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": GRAMMAR}}}},
    replaces=PATCH_TOOLS,
    shows=("apply_patch",),
    handles=lambda item: item.get("type") == "custom" and _custom(item).get("name")
    == "apply_patch",
    calls=_freeform_calls,
    answer=_freeform_answer,
)

FACES = (TEXT_EDITOR, APPLY_PATCH, FREEFORM_PATCH)
