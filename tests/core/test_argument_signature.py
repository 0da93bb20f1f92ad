"""One rule for argument problems (issue 36.5): whatever tool answers ``invalid_arguments``
— the schema, a tool's ``validate``, or the tool's own code while it runs — the model gets
the contract's ``argument_validation:<tool>:<fingerprint>:<category>`` signature and the
host counts an argument failure; a tool's own code becomes the category."""

from __future__ import annotations

from typing import Any

import callgate_docs
import callgate_memory
from callgate import ToolError, ToolResult, ToolSpec, hookimpl

SCHEMA = {"type": "object", "properties": {"x": {"type": "string"}},
          "additionalProperties": False}


class Picky:
    """A third-party plugin whose tools find argument problems only while running."""

    __name__ = "picky"

    @staticmethod
    def _raises(ctx: Any, args: dict[str, Any]) -> str:
        raise ToolError("invalid_arguments", "x must name an existing ticket", "PICKY_NO_TICKET")

    @staticmethod
    def _returns(ctx: Any, args: dict[str, Any]) -> ToolResult:
        return ToolResult.failure("invalid_arguments", "x is too vague")

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(name="raises", description="Raise.", schema=SCHEMA,
                              execute=self._raises, read_only=True))
        registry.add(ToolSpec(name="returns", description="Return.", schema=SCHEMA,
                              execute=self._returns, read_only=True))


def test_a_third_party_tools_own_argument_problems_carry_the_contract_signature(
        callgate_session: Any) -> None:
    s = callgate_session(plugins=[Picky()])
    before = s.session.counters().get("argument_failures", 0)
    raised = s.expect_error("raises", {"x": "t"}, kind="invalid_arguments",
                            signature=s.argument_signature("raises", "PICKY_NO_TICKET"))
    assert raised.error.signature.endswith(":picky_no_ticket")
    assert raised.text == ("x must name an existing ticket\n"
                           f"signature: {raised.error.signature}")
    returned = s.expect_error("returns", {"x": "t"}, kind="invalid_arguments")
    assert returned.error.signature == s.argument_signature("returns", "tool")
    assert s.session.counters()["argument_failures"] == before + 2


def test_the_builtin_codes_the_audit_found_are_in_the_contract_form(
        callgate_session: Any) -> None:
    s = callgate_session(plugins=[callgate_docs, callgate_memory])
    s.expect_error("docs", {"operation": "search", "query": "  "}, kind="invalid_arguments",
                   signature=s.argument_signature("docs", "DOCS_NO_QUERY"))
    s.expect_error("remember", {"description": "key AKIAIOSFODNN7EXAMPLE", "body": "x"},
                   kind="invalid_arguments",
                   signature=s.argument_signature("remember", "MEMORY_CREDENTIAL"))
