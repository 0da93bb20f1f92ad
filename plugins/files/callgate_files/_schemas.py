"""The JSON Schema pieces the file tools' declared schemas share. No imports: registering
the tools reads them without loading the tools' machinery (issue 38)."""

from __future__ import annotations

from typing import Any

PATH = {"type": "string", "minLength": 1, "maxLength": 4096}


def path_schema(description: str) -> dict[str, Any]:
    return {**PATH, "description": description}
