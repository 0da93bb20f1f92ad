#!/bin/bash
# .claude/hooks/block-rm.sh: the Claude Code hooks reference's PreToolUse example, its
# shape unchanged (jq reads the input; a JSON deny on stdout).
COMMAND=$(jq -r '.tool_input.command')

if echo "$COMMAND" | grep -q 'rm -rf'; then
  jq -n '{
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "Destructive command blocked by hook"
    }
  }'
else
  exit 0  # allow the command
fi
