"""The file machinery file tools share: observed reads, atomic publishing, the gate's errors.

A structured mutation declares its path arguments (``ToolSpec.mutates_paths``, or
``ToolSpec.mutated_paths`` for paths inside an argument, as in a patch);
the host gate confines, leases, stats and checks them before the tool runs and
hands them over as ``ctx.gated`` (`GatedPath`). The tool then::

    source = ctx.files.load(ctx.gated["path"], tool="append_line")   # size, read, binary
    changed = ctx.files.publish(source, source.encode(new_text))      # double check, replace

- `FileAccess` (``ctx.files``): ``load``/``publish``/``create``/``record`` for
  mutations, ``read_text``/``read_bytes``/``write_text``/``write_bytes`` for simple
  tools (a plugin's read records an observation only with ``observe=True``).
- Atomic publishing: `replace_file`, `create_file`, `rename_noreplace`,
  `copy_noreplace`, `make_parents`, `remove_empty_dirs`, the stale-temp sweep.
  ``replace_file(..., guard_writers=True)`` (what ``publish`` does) replaces under a
  kernel read lease (`ReadLease`, `replace_guarded`): refused with `WriterOpen` while
  another program has the file open for writing (``open_for_writing``), undone with
  `FileChanged` when one starts writing during the replace, so no write is lost to it.
- Observations: `ObservationLedger`, `Present`, `Absent`, `version_of`, `matches`.
- What no tool may read: the read deny list (`ReadDenylist`, `denied_name`,
  `DENIED_NAMES`). What a sandbox protects and hides is `callgate.process`'s
  (`protected_paths`, `hidden_paths`).
- Errors with their recovery (``FS_*``): `not_found`, `not_observed`, `stale`, ...
- Writer leases: `WriterLease`, `held_paths`.
- Files that changed on disk (``session.file_changes``, a `FileChanges` feed): what the
  session's tools changed, at once, and what its watcher saw change (shell commands, other
  programs), as `FileChange` batches, for plugins that keep derived state (a language
  server, a cache); ``subscribe(listener)`` returns the function that unsubscribes.

Text decoding lives in `callgate.text`, paths in `callgate.paths`; change previews and
diffs (`FilePreview`, `change_diff`) in the library ``callgate_toolkit.diffs``.
"""

from ._files.access import FileAccess, SourceFile, binary_error, too_large
from ._files.changes import ChangeKind, ChangeListener, ChangeOrigin, FileChange, FileChanges
from ._files.gate import (
    GatedPath,
    changed_while_applying,
    io_error,
    is_directory,
    kind_of,
    not_found,
    not_observed,
    not_regular,
    open_for_writing,
    removed_after_read,
    stale,
    stale_detail,
)
from ._files.policy import DEFAULT_MAX_EDIT_BYTES, DENIED_NAMES, ReadDenylist, denied_name
from ._fs.atomic import (
    FileChanged,
    copy_noreplace,
    create_file,
    make_parents,
    pid_alive,
    remove_empty_dirs,
    rename_noreplace,
    replace_file,
    replace_guarded,
    sweep_stale_temps,
    sweep_tree,
    temp_basename,
    temp_name,
)
from ._fs.file_lease import ReadLease, WriterOpen
from ._fs.lease import WriterLease, held_paths
from ._fs.observations import (
    Absent,
    ObservationLedger,
    Present,
    identity_of,
    matches,
    needs_digest,
    version_of,
)

__all__ = [
    "DEFAULT_MAX_EDIT_BYTES",
    "DENIED_NAMES",
    "Absent",
    "ChangeKind",
    "ChangeListener",
    "ChangeOrigin",
    "FileAccess",
    "FileChange",
    "FileChanged",
    "FileChanges",
    "GatedPath",
    "ObservationLedger",
    "Present",
    "ReadDenylist",
    "ReadLease",
    "SourceFile",
    "WriterLease",
    "WriterOpen",
    "binary_error",
    "changed_while_applying",
    "copy_noreplace",
    "create_file",
    "denied_name",
    "held_paths",
    "identity_of",
    "io_error",
    "is_directory",
    "kind_of",
    "make_parents",
    "matches",
    "needs_digest",
    "not_found",
    "not_observed",
    "not_regular",
    "open_for_writing",
    "pid_alive",
    "remove_empty_dirs",
    "removed_after_read",
    "rename_noreplace",
    "replace_file",
    "replace_guarded",
    "stale",
    "stale_detail",
    "sweep_stale_temps",
    "sweep_tree",
    "temp_basename",
    "temp_name",
    "too_large",
    "version_of",
]
