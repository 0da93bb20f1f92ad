"""A SCRIPTED (FAKE) MODEL for the agent-loop examples: no network, no API key, no thinking.

`SCRIPT` is a fixed list of model turns for the demo workspace (``examples/workspace``):
each turn is a list of tool calls, and the last one is the final answer. The two
fake clients below replay it through the same SDK methods and SDK types the real
clients use (``client.chat.completions.create`` returning an ``openai``
``ChatCompletion``; ``client.messages.create`` returning an ``anthropic``
``Message``), so the example loops run unchanged with either. They also record
every request, which the tests in ``tests/examples`` inspect.

The first turn is deliberately wrong (``file_path`` instead of ``path``) to show
the host's feedback: the call is not executed and the result says what to fix.
"""

from __future__ import annotations

import json
from typing import Any

Turn = list[tuple[str, dict[str, Any]]] | str

SCRIPT: list[Turn] = [
    [("read_file", {"file_path": "notes.txt"})],
    [("read_file", {"path": "notes.txt"}), ("read_file", {"path": "src/greet.py"})],
    [("edit_file", {"path": "src/greet.py", "old_string": 'return "Hello, " + name + "!"',
                    "new_string": 'return f"Hello, {name}! Nice to see you."'})],
    [("bash", {"command": "python3 src/greet.py"})],
    "Done: greet() now says hello in a friendlier way, and the script prints the new greeting.",
]

#: The same task in Claude's native tool shapes (``agent_loop_anthropic_native.py``): the
#: first call leaves out ``new_str`` to show the feedback in the ``tool_result`` shape.
EDITOR = "str_replace_based_edit_tool"
NATIVE_ANTHROPIC_SCRIPT: list[Turn] = [
    [(EDITOR, {"command": "view", "path": "src"})],
    [(EDITOR, {"command": "view", "path": "src/greet.py"})],
    [(EDITOR, {"command": "str_replace", "path": "src/greet.py",
               "old_str": 'return "Hello, " + name + "!"'})],
    [(EDITOR, {"command": "str_replace", "path": "src/greet.py",
               "old_str": 'return "Hello, " + name + "!"',
               "new_str": 'return f"Hello, {name}! Nice to see you."'})],
    [("bash", {"command": "python3 src/greet.py"})],
    "Done: greet() now says hello in a friendlier way, and the script prints the new greeting.",
]

#: The same task in OpenAI's native tool shapes on the Responses API
#: (``agent_loop_openai_native.py``): raw output items, the first patch deliberately stale
#: (the file was not read) to show the refusal in ``apply_patch_call_output``.
_GREET_DIFF = ('@@ def greet(name: str) -> str:\n-    return "Hello, " + name + "!"\n'
               '+    return f"Hello, {name}! Nice to see you."\n')
NATIVE_OPENAI_SCRIPT: list[Any] = [
    [{"type": "apply_patch_call", "call_id": "call_p1", "status": "completed",
      "operation": {"type": "update_file", "path": "src/greet.py", "diff": _GREET_DIFF}}],
    [{"type": "shell_call", "call_id": "call_s1", "status": "completed",
      "action": {"commands": ["cat notes.txt"], "timeout_ms": 10000,
                 "max_output_length": 4000}},
     {"type": "function_call", "call_id": "call_r1", "name": "read_file",
      "arguments": json.dumps({"path": "src/greet.py", "offset": None, "limit": None,
                               "intent": None, "cursor": None})}],
    [{"type": "apply_patch_call", "call_id": "call_p2", "status": "completed",
      "operation": {"type": "update_file", "path": "src/greet.py", "diff": _GREET_DIFF}}],
    [{"type": "shell_call", "call_id": "call_s2", "status": "completed",
      "action": {"commands": ["python3 src/greet.py"], "timeout_ms": 10000,
                 "max_output_length": 4000}}],
    "Done: greet() now says hello in a friendlier way, and the script prints the new greeting.",
]


class _Scripted:
    """Replays `SCRIPT` one turn per request and records each request's keyword arguments."""

    def __init__(self, script: list[Turn] | None = None) -> None:
        self.script = list(script or SCRIPT)
        self.requests: list[dict[str, Any]] = []

    def _next(self, request: dict[str, Any]) -> Turn:
        self.requests.append({**request, "messages": list(request.get("messages", []))})
        if not self.script:
            return "(the scripted model has nothing more to say)"
        return self.script.pop(0)


class ScriptedOpenAI(_Scripted):
    """FAKE stand-in for ``openai.OpenAI()``: only ``chat.completions.create`` exists."""

    def __init__(self, script: list[Turn] | None = None) -> None:
        super().__init__(script)
        self.chat = self
        self.completions = self

    def create(self, **request: Any) -> Any:
        from openai.types.chat import ChatCompletion

        turn, n = self._next(request), len(self.requests)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(turn, str):
            message["content"] = turn
        else:
            message["tool_calls"] = [
                {"id": f"call_{n}_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(turn)]
        return ChatCompletion.model_validate({
            "id": f"scripted-{n}", "object": "chat.completion", "created": 0,
            "model": "scripted", "choices": [{"index": 0, "message": message,
                                              "finish_reason": "stop" if isinstance(turn, str)
                                              else "tool_calls"}]})


class ScriptedAnthropic(_Scripted):
    """FAKE stand-in for ``anthropic.Anthropic()``: only ``messages.create`` exists."""

    def __init__(self, script: list[Turn] | None = None) -> None:
        super().__init__(script)
        self.messages = self

    def create(self, **request: Any) -> Any:
        from anthropic.types import Message

        turn, n = self._next(request), len(self.requests)
        if isinstance(turn, str):
            content: list[dict[str, Any]] = [{"type": "text", "text": turn}]
        else:
            content = [{"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": args}
                       for i, (name, args) in enumerate(turn)]
        return Message.model_validate({
            "id": f"msg_scripted_{n}", "type": "message", "role": "assistant",
            "model": "scripted", "content": content, "stop_sequence": None,
            "stop_reason": "end_turn" if isinstance(turn, str) else "tool_use",
            "usage": {"input_tokens": 0, "output_tokens": 0}})


class ScriptedOpenAIResponses(_Scripted):
    """FAKE stand-in for ``openai.OpenAI()`` on the Responses API: only
    ``responses.create`` exists; each scripted turn is a list of raw output items."""

    def __init__(self, script: list[Any] | None = None) -> None:
        super().__init__(script or NATIVE_OPENAI_SCRIPT)
        self.responses = self

    def _next(self, request: dict[str, Any]) -> Any:
        self.requests.append({**request, "input": list(request.get("input", []))})
        if not self.script:
            return "(the scripted model has nothing more to say)"
        return self.script.pop(0)

    def create(self, **request: Any) -> Any:
        from openai.types.responses import Response

        turn, n = self._next(request), len(self.requests)
        if isinstance(turn, str):
            output: list[dict[str, Any]] = [{
                "type": "message", "id": f"msg_{n}", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn, "annotations": []}]}]
        else:
            output = [{"id": f"item_{n}_{i}", **item} for i, item in enumerate(turn)]
        return Response.model_validate({
            "id": f"resp_scripted_{n}", "object": "response", "created_at": 0,
            "model": "scripted", "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": []})
