#!/usr/bin/env python3
# A hook with a bug: it crashes (a traceback on stderr, exit 1).
import json
import sys

data = json.load(sys.stdin)
print(data["tool_input"]["no_such_key"])
