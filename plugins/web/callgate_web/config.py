"""The ``[web]`` table: web_fetch's limits, loopback, pinned names and CA bundle."""

from __future__ import annotations

from typing import Any

#: ``x-workspace`` (callgate's config layering): a workspace config the user config does not
#: trust may lower the limits, never open loopback, pin names to addresses (domain rules
#: would follow them) or add a CA.
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "timeout_s": {"type": "number", "minimum": 1, "maximum": 120, "default": 30,
                      "x-workspace": "min", "x-kind": "limit"},
        "connect_timeout_s": {"type": "number", "minimum": 1, "maximum": 60, "default": 10,
                              "x-workspace": "min", "x-kind": "limit"},
        "max_bytes": {"type": "integer", "minimum": 1024, "maximum": 10485760,
                      "default": 1048576, "x-workspace": "min", "x-kind": "limit"},
        "max_redirects": {"type": "integer", "minimum": 0, "maximum": 10, "default": 5,
                          "x-workspace": "min", "x-kind": "limit"},
        "allow_loopback": {"type": "boolean", "default": False, "x-workspace": [True, False],
                           "x-kind": "scope"},
        "resolve": {
            "type": "object",
            "additionalProperties": {"type": "array", "minItems": 1,
                                     "items": {"type": "string", "minLength": 1}},
            "default": {},
            "x-workspace": "user", "x-kind": "scope",
        },
        "ca_bundle": {"type": "string", "minLength": 1, "x-workspace": "user", "x-kind": "path"},
    },
}
