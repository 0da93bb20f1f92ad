#!/bin/bash
# The hooks guide's quickstart: log every Bash command (and its description).
jq -r '"\(.tool_input.command) - \(.tool_input.description // "No description")"' >> "$HOOK_LOG"
