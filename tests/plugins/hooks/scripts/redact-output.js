#!/usr/bin/env node
// A PostToolUse hook in Node that replaces what the model reads (updatedToolOutput, in the
// tool_response's own shape); with REDACT_BROKEN set it answers a shape that does not fit.
let raw = "";
process.stdin.on("data", (chunk) => (raw += chunk));
process.stdin.on("end", () => {
  const input = JSON.parse(raw);
  const response = input.tool_response;
  const updated = process.env.REDACT_BROKEN
    ? "just a string"
    : { ...response, stdout: response.stdout.replace(/secret-\w+/g, "[redacted]") };
  console.log(JSON.stringify({
    hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: updated },
  }));
});
