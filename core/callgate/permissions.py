"""What plugins add to the permission engine (``[permissions]`` rules, host.md §6).

A tool's `callgate.PermissionSubject` names the arguments ``Tool(spec)`` rules judge and
their kind. ``path``, ``pattern`` and ``url`` are built in (`BUILTIN_KINDS`); any other
kind is supplied by a plugin at boot with ``Registry.add_subject_kind(SubjectKind(...))``:
how a value splits into the parts rules judge (`SubjectPart`), how a spec matches, and
the read-only verdict a strictly read-only subagent asks. The shell plugin supplies
``command`` (built by the library callgate-commandline); a tool whose kind no loaded
plugin supplies fails boot.
"""

from ._permissions.rules import BUILTIN_KINDS, SubjectKind, SubjectPart

__all__ = ["BUILTIN_KINDS", "SubjectKind", "SubjectPart"]
