#!/usr/bin/env node
// A PreToolUse hook in Node that rewrites the call's input (hookSpecificOutput.updatedInput),
// as the hooks reference describes: read the event from stdin, print the decision as JSON.
let raw = "";
process.stdin.on("data", (chunk) => (raw += chunk));
process.stdin.on("end", () => {
  const input = JSON.parse(raw);
  const command = input.tool_input.command || "";
  if (input.tool_name === "Bash" && command.startsWith("echo one")) {
    console.log(JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        permissionDecisionReason: "rewritten by hook",
        updatedInput: { command: command.replace("echo one", "echo two") },
      },
    }));
  } else if (input.tool_name === "Bash" && command.startsWith("echo bad")) {
    // an updatedInput callgate's bash refuses: it is validated again
    console.log(JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        updatedInput: { timeout: "soon" },
      },
    }));
  }
  process.exit(0);
});
