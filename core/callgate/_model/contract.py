"""A tool as the contract shows it (`contract_entry`): the canonical entry ``callgate tools
--json`` prints and every provider rendering starts from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .canonical import canonical_schema
from .spec import ToolSpec


def contract_entry(spec: ToolSpec) -> dict[str, Any]:
    """``{name, read_only, description, schema}``: a tool as the contract shows it."""
    return {
        "name": spec.name,
        "read_only": spec.contract_read_only,
        "description": spec.description,
        "schema": canonical_schema(spec.schema),
    }


def contract_entries(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The contract entries of ``specs``, by name."""
    return [contract_entry(s) for s in sorted(specs, key=lambda s: s.name)]
