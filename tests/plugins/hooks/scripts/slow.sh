#!/bin/bash
# A hook that hangs, with a child of its own: its timeout must kill the whole group.
sleep 300 &
echo "$!" > "$HOOK_CHILD_PID"
sleep 300
