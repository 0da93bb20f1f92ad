"""The words a fact's fields take and the patterns of its names: what the tools' schemas
declare, apart from the fact's machinery (registering the tools imports this, issue 38)."""

from __future__ import annotations

TYPES = ("user", "feedback", "project", "reference")
SCOPES = ("project", "global")
ACTIVATIONS = ("relevant", "pinned")
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
ID_PATTERN = r"^m-[0-9a-f]{16}$"
