#!/bin/bash
# The exit-code form of the same guard: exit 2 blocks, and stderr is what the model reads.
INPUT=$(cat)
COMMAND=$(echo "$INPUT" | jq -r '.tool_input.command')

if echo "$COMMAND" | grep -q 'rm -rf'; then
  echo "Blocked: 'rm -rf' is not allowed by project policy" >&2
  exit 2
fi
exit 0
