"""notebook_edit: replace, insert or delete one cell of a Jupyter notebook, keeping
everything else as it was and the result valid (files.md §6.7)."""

from __future__ import annotations

import json
import secrets
from typing import Any

from callgate import ToolContext, Violation
from callgate.text import to_crlf
from callgate_toolkit.diffs import FilePreview

from .._common import Planned, fail, publish
from .._common import preview as _preview
from .._encoding import check_inserted


def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    mode = args.get("edit_mode", "replace")
    number = args.get("cell_number")
    out: list[Violation] = []
    if number == -1 and mode != "insert":
        out.append(Violation("/cell_number", "minimum", "cell_number >= 0 (-1 is only for "
                             "insert)"))
    if mode in ("replace", "delete") and "cell_id" not in args and number is None:
        out.append(Violation("", "required", f"cell_id or cell_number to {mode} a cell"))
    if mode == "replace" and "new_source" not in args:
        out.append(Violation("", "required", "new_source for edit_mode replace"))
    if mode == "insert":
        for key in ("cell_type", "new_source"):
            if key not in args:
                out.append(Violation("", "required", f"{key} for edit_mode insert"))
    return out


def _source_lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _not_notebook(p: str, reason: str) -> Exception:
    return fail("FS_NOT_NOTEBOOK", f"{p} is not an nbformat 4 notebook ({reason}); use "
                "edit_file for other JSON")


def _parse(text: str, p: str) -> dict[str, Any]:
    try:
        nb = json.loads(text)
    except ValueError as exc:
        raise _not_notebook(p, f"not JSON: {getattr(exc, 'msg', exc)}") from None
    if not isinstance(nb, dict):
        raise _not_notebook(p, "the top level is not an object")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise _not_notebook(p, "no cells array")
    if not all(isinstance(c, dict) for c in cells):
        raise _not_notebook(p, "a cell is not an object")
    if nb.get("nbformat") != 4:
        raise _not_notebook(p, f"nbformat is {nb.get('nbformat')!r}, not 4")
    return nb


def _errors(nb: dict[str, Any]) -> set[tuple[str, str]]:
    """nbformat's schema errors, by (path, message); the validator never repairs here."""
    from nbformat import validator

    minor = nb.get("nbformat_minor")
    try:
        found = validator.iter_validate(nb, version=4,
                                        version_minor=minor if isinstance(minor, int) else None)
        return {("/".join(str(k) for k in e.absolute_path), e.message) for e in found}
    except Exception as exc:  # an unknown minor version, a broken schema install
        return {("", f"cannot validate: {exc}")}


def _indent(text: str) -> int:
    lines = text.split("\n", 2)
    if len(lines) > 1:
        lead = len(lines[1]) - len(lines[1].lstrip(" "))
        if 1 <= lead <= 8:
            return lead
    return 1


def _target(cells: list[dict[str, Any]], args: dict[str, Any], p: str) -> int:
    if "cell_id" in args:
        for i, cell in enumerate(cells):
            if cell.get("id") == args["cell_id"]:
                return i
        raise fail("FS_CELL_NOT_FOUND", f'no cell with id "{args["cell_id"]}" in {p}; read the '
                   "notebook to find the id")
    number = args["cell_number"]
    if number >= len(cells):
        raise fail("FS_CELL_NOT_FOUND", f"cell_number {number} is out of range: {p} has "
                   f"{len(cells)} cells; read the notebook to pick a cell")
    return number


def _as_code(cell: dict[str, Any]) -> None:
    cell["outputs"] = []
    cell["execution_count"] = None


def _new_id(cells: list[dict[str, Any]]) -> str:
    taken = {c.get("id") for c in cells}
    while True:
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def plan(ctx: ToolContext, args: dict[str, Any]) -> Planned:
    gated = ctx.gated["path"]
    source = ctx.files.load(gated, tool="notebook_edit")
    p = gated.display
    text = source.text
    nb = _parse(text, p)
    before = _errors(nb)
    cells: list[dict[str, Any]] = nb["cells"]
    mode = args.get("edit_mode", "replace")
    new_source = args.get("new_source", "")
    check_inserted(source, [new_source])
    if mode == "insert":
        if "cell_id" in args:
            index = _target(cells, args, p) + 1
        elif args.get("cell_number", -1) == -1:
            index = 0
        else:
            index = _target(cells, args, p) + 1
        cell: dict[str, Any] = {"cell_type": args["cell_type"], "metadata": {},
                                "source": _source_lines(new_source)}
        if args["cell_type"] == "code":
            cell = {"cell_type": "code", "execution_count": None, "metadata": {},
                    "outputs": [], "source": cell["source"]}
        minor = nb.get("nbformat_minor")
        if (isinstance(minor, int) and minor >= 5) or any("id" in c for c in cells):
            cell = {"id": _new_id(cells), **cell}
        cells.insert(index, cell)
        what = f"inserted {args['cell_type']} cell at index {index} in {p}"
    elif mode == "delete":
        index = _target(cells, args, p)
        cell = cells.pop(index)
        what = f"deleted cell {index} from {p}"
    else:
        index = _target(cells, args, p)
        cell = cells[index]
        cell["source"] = _source_lines(new_source)
        if "cell_type" in args and args["cell_type"] != cell.get("cell_type"):
            cell["cell_type"] = args["cell_type"]
            if args["cell_type"] == "markdown":
                cell.pop("outputs", None)
                cell.pop("execution_count", None)
        if cell.get("cell_type") == "code":
            _as_code(cell)
        what = f"replaced source of cell {index} in {p}"
    after = _errors(nb)
    new_errors = sorted(after - before)
    if new_errors:
        where, message = new_errors[0]
        raise fail("FS_INVALID_NOTEBOOK", f"the edited notebook would not be valid "
                   f"(at /{where}: {message}); nothing was written")
    new_text = json.dumps(nb, indent=_indent(text), ensure_ascii=False) + "\n"
    if source.decoded is not None and source.decoded.style == "crlf":
        new_text = to_crlf(new_text)
    done = f"{what} ({len(cells)} cells)"
    if isinstance(cell.get("id"), str):
        done += f' (id "{cell["id"]}")'
    return Planned(gated, source, source.encode(new_text), new_text, done=done,
                   noop=f"{p} already has exactly this content; nothing written")


def execute(ctx: ToolContext, args: dict[str, Any]) -> str:
    return publish(ctx, plan(ctx, args))


def preview(ctx: ToolContext, args: dict[str, Any]) -> FilePreview:
    return _preview(plan(ctx, args))
