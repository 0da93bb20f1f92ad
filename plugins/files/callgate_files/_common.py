"""What the text mutations share: a planned change, and the two ways to finish it.

Every mutating tool computes a `Planned` change with the same checks whether
it runs or is previewed; `publish` writes it (create-only or double-checked
replace) and says what happened, `preview` describes it without touching
anything (files.md §7).
"""

from __future__ import annotations

import attrs
from callgate import ToolContext, ToolError
from callgate.files import GatedPath, SourceFile, version_of
from callgate_toolkit.diffs import ChangeDiff, FilePreview, change_diff


@attrs.frozen
class Planned:
    """A computed change to one file: its new bytes and what to say once it is done.

    ``source`` is ``None`` for a create. ``noop`` is the answer when the new
    bytes equal the old ones (nothing is written).
    """

    gated: GatedPath
    source: SourceFile | None
    new_bytes: bytes
    new_text: str | None
    done: str
    noop: str
    show_diff: bool = True
    binary: bool = False
    change: ChangeDiff | None = None

    @property
    def display(self) -> str:
        return self.gated.display

    @property
    def unchanged(self) -> bool:
        return self.source is not None and self.source.data == self.new_bytes

    def diff(self) -> ChangeDiff | None:
        if self.change is not None:
            return self.change
        if self.binary or self.new_text is None:
            return None
        old = self.source.text if self.source is not None else None
        return change_diff(old, self.new_text, self.display)


def publish(ctx: ToolContext, planned: Planned) -> str:
    """Write the planned change (or nothing, if it changes no byte) and describe it."""
    if planned.source is None:
        ctx.files.create(planned.gated, planned.new_bytes, text=planned.new_text)
    elif not ctx.files.publish(planned.source, planned.new_bytes, text=planned.new_text):
        return planned.noop
    if not planned.show_diff:
        return planned.done
    diff = planned.diff()
    if diff is None or not diff.text:
        return planned.done
    return planned.done + "\n" + diff.for_output()


def preview(planned: Planned) -> FilePreview:
    """The change as an approver sees it; nothing is written, locked or recorded."""
    source = planned.source
    kind = "create" if source is None else "noop" if planned.unchanged else "modify"
    diff = planned.diff()
    return FilePreview(
        kind=kind,  # type: ignore[arg-type]
        path=planned.display,
        old_bytes=source.data if source is not None else None,
        new_bytes=planned.new_bytes,
        diff=diff.text if diff is not None else None,
        binary=planned.binary,
        added=diff.added if diff is not None else 0,
        removed=diff.removed if diff is not None else 0,
        base_version=version_of(planned.gated.stat) if planned.gated.stat is not None else None,
    )


def fail(code: str, message: str, kind: str = "tool_error") -> ToolError:
    """A files error: ``<CODE>: <message>`` with the code as its signature."""
    return ToolError(kind, f"{code}: {message}", code)
