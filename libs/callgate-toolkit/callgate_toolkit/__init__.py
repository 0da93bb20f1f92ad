"""callgate-toolkit: what several plugins need and the core does not enforce.

A library (not a plugin: no entry point, no tools). It sits above the core: it imports
only ``callgate``'s public API, and the core never imports it. Plugins import
``callgate`` and libraries, never each other, never ``callgate._*``. Each module is
imported on its own (this package re-exports nothing, so a plugin pays only for what
it uses):

- `callgate_toolkit.walk`: the walker every tool shares (path order, ``.gitignore``
  rules, race-free beneath held roots): ``walk_files``, ``IgnoreRules``, ``join_rel``.
- `callgate_toolkit.diffs`: what a file mutation changes: ``FilePreview`` (what an
  approver sees), ``change_diff``/``ChangeDiff`` (the diff a tool shows).
- `callgate_toolkit.placeholders`: ``$ARGUMENTS``/``$1``..``$9`` in prompt templates
  (skills and slash commands).
- `callgate_toolkit.watch`: directory watches asked of the kernel (inotify), one
  instance per process.
- `callgate_toolkit.fifo`: ``FifoLock``, an event-loop lock served in arrival order and
  lendable.
- `callgate_toolkit.subagents`: ``SubagentOutcome``, how a child session ended.
"""
