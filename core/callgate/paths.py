"""Paths in a workspace: confinement, race-free access beneath held roots, and the one glob
dialect.

- `Workspace` (``ctx.workspace``): ``resolve(path, write=...)`` confines a path to the
  workspace (a `ResolvedPath`, or ``FS_OUTSIDE_WORKSPACE``); `within` tests a path;
  `root_path` makes any directory a root of its own.
- Race-free access beneath held roots: `HeldDir` (``ResolvedPath.open_parent()``),
  `open_dir`, `walk_dirs`, `READ_FLAGS`, `PathChanged`; `confinement_mechanism()` says
  which kernel mechanism this host uses.
- `PRUNE`: the directory names no walk enters unless named (``.git``, ``node_modules``...).
  The walker every tool shares (``.gitignore`` rules, path order) is the library
  ``callgate_toolkit.walk``, built on these.
- `compile_glob`: the glob dialect of the search tools' patterns and of the
  ``[permissions]`` path rules (``*``, ``?``, ``[...]``, ``**``, ``{a,b}``), so a rule
  ``Edit(src/**)`` and a ``glob`` of ``src/**`` agree on every path.
- `state_dir`: where plugins keep state that outlives a session (``$CALLGATE_HOME``,
  else the platform's user state directory; not created); `HOME_VARIABLE` names that
  variable.
"""

from ._config.state import HOME_VARIABLE, state_dir
from ._fs.atomic import PRUNE
from ._fs.confine import READ_FLAGS, HeldDir, PathChanged, open_dir, walk_dirs
from ._fs.confine import mechanism as confinement_mechanism
from ._fs.globs import META as GLOB_META
from ._fs.globs import Glob, GlobError, compile_glob, literal_prefix
from ._fs.workspace import ResolvedPath, Workspace, root_path, within

__all__ = [
    "GLOB_META",
    "HOME_VARIABLE",
    "PRUNE",
    "READ_FLAGS",
    "Glob",
    "GlobError",
    "HeldDir",
    "PathChanged",
    "ResolvedPath",
    "Workspace",
    "compile_glob",
    "confinement_mechanism",
    "literal_prefix",
    "open_dir",
    "root_path",
    "state_dir",
    "walk_dirs",
    "within",
]
