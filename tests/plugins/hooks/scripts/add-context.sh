#!/bin/bash
# Allow, with context for the model (hookSpecificOutput.additionalContext).
INPUT=$(cat)
COMMAND=$(echo "$INPUT" | jq -r '.tool_input.command // empty')
jq -n --arg ctx "Environment: hooks-test; the command was: $COMMAND" '{
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "allow",
    additionalContext: $ctx
  }
}'
