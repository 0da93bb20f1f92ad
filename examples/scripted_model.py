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
