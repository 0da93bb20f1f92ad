"""callgate-hooks: Claude Code and Codex setups in callgate.

Their hook scripts run unchanged (Claude Code's wire format, which Codex reads too) on
callgate's own hook points, their permission rules import into callgate's rule engine (never
wider than the original; everything not exact is in the boot report), and ``callgate rules
check | explain | lint`` test every rule. See docs/hooks-compat.md and docs/migrating.md.

Modules: `plugin` (the hook implementations), `config` (``[hooks]``, ``[claude_code]``),
`sources` (settings files, read as data with their lines), `codex_rules` (``.rules`` parsed,
never executed), `translate` (rules and modes as callgate's), `names` (names at the boundary),
`runner` (one handler run through the spawn door, or an HTTP POST), `output` (exit codes and
JSON read per event), `events` (a session's hooks at work), `setup` (what a host and each
session run and apply), `commands` and `lint` (``callgate rules``).
"""
