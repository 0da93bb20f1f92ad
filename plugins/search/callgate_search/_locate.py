"""Resolving a search tool's ``path`` argument, and the errors every search tool shares.

Every path goes through the core's workspace confinement (symlinks included)
and the read deny list (a denied path is "not found"), then one ``stat``.
Paths print relative to the workspace root with ``/`` so the model can pass
them unchanged to ``read_file``. Everything a search reads afterwards goes
through ``base`` (confined beneath its held root, race-free).
"""

from __future__ import annotations

import os
import stat as stat_mod
import time

import attrs
from callgate import ToolContext, ToolError
from callgate.paths import ResolvedPath, within


@attrs.frozen
class Located:
    """A confined, existing search target.

    ``root`` is the directory printed paths are relative to (the workspace
    root, or for a target in an extra read root, the target's own directory);
    ``rel`` is the target relative to it (``""`` for the root itself);
    ``prefix`` goes in front of every printed path (empty inside the workspace).
    """

    root: str
    rel: str
    prefix: str
    display: str
    st: os.stat_result
    base: ResolvedPath
    """``root`` as a confined path: walks and reads go beneath it."""

    @property
    def resolved(self) -> ResolvedPath:
        """The target as a confined path."""
        return self.base.child(self.rel) if self.rel else self.base

    @property
    def path(self) -> str:
        return os.path.join(self.root, self.rel) if self.rel else self.root

    @property
    def is_dir(self) -> bool:
        return stat_mod.S_ISDIR(self.st.st_mode)

    @property
    def is_file(self) -> bool:
        return stat_mod.S_ISREG(self.st.st_mode)

    def shown(self, rel: str) -> str:
        """How a path below ``root`` prints."""
        return self.prefix + rel if rel else (self.prefix.rstrip("/") or ".")


def not_found(tool: str, display: str) -> ToolError:
    return ToolError("not_found", f"{tool}: path not found: {display}", "not_found")


def not_a_directory(tool: str, display: str, advice: str = "") -> ToolError:
    return ToolError("tool_error", f"{tool}: not a directory: {display}{advice}",
                     "SEARCH_NOT_A_DIRECTORY")


def locate(ctx: ToolContext, tool: str, path: str) -> Located:
    """Confine ``path`` and stat it; a missing (or denied) path is ``<tool>: path not found:
    <p>``."""
    resolved = ctx.workspace.resolve(path)
    if ctx.files.denied(resolved):
        raise not_found(tool, resolved.display)
    try:
        st = resolved.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise not_found(tool, resolved.display) from None
    except OSError as exc:
        raise ToolError("tool_error", f"{tool}: cannot read {resolved.display}: "
                        f"{exc.strerror}", "SEARCH_IO") from None
    root = ctx.workspace.root
    if within(resolved.path, root):
        rel = os.path.relpath(resolved.path, root)
        rel = "" if rel == "." else rel.replace(os.sep, "/")
        return Located(root, rel, "", resolved.display, st, ctx.workspace.resolve(root))
    if stat_mod.S_ISDIR(st.st_mode):
        return Located(resolved.path, "", resolved.path.rstrip("/") + "/", resolved.display, st,
                       resolved)
    parent, name = os.path.split(resolved.path)
    return Located(parent, name, parent.rstrip("/") + "/", resolved.display, st,
                   ctx.workspace.resolve(parent))


def deadline(ctx: ToolContext) -> tuple[float, float]:
    """``(seconds, monotonic deadline)`` of a walk, from ``[search] timeout_s``."""
    seconds = float(ctx.host.plugin_config_value("search", "timeout_s", 30))
    return seconds, time.monotonic() + seconds


def timed_out_line(seconds: float) -> str:
    return f"... (timed out after {seconds:g} s; results incomplete; narrow the path or pattern)"
