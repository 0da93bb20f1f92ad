"""callgate-hooks: Claude Code and Codex setups in callgate.

Their hook scripts run unchanged (Claude Code's wire format, which Codex reads too) on
callgate's own hook points, their permission rules import into callgate's rule engine (never
wider than the original; everything not exact is in the boot report), and ``callgate rules
check | explain | lint`` test every rule. See docs/hooks-compat.md and docs/migrating.md.

Modules: `plugin` (the hook implementations and the ``callgate rules`` command), `config`
(``[hooks]``, ``[claude_code]``); private: `_sources` (settings files, read as data with their
lines), `_codex_rules` (``.rules`` parsed, never executed), `_translate` (rules and modes as
callgate's), `_names` (names at the boundary), `_runner` (one handler run through the spawn
door, or an HTTP POST), `_output` (exit codes and JSON read per event), `_events` (a session's
hooks at work), `_setup` (what a host and each session run and apply), `_rules_command` and
`_lint` (``callgate rules``). ``session.extension(HOOK_RUNNER)`` is a session's hooks at work
(``await ....user_prompt_submit(prompt)`` for an integrator that has the user's prompt).
"""

from .plugin import EXTENSION as HOOK_RUNNER
from .plugin import callgate_register_tools, host_hooks

__all__ = ["HOOK_RUNNER", "callgate_register_tools", "host_hooks"]
