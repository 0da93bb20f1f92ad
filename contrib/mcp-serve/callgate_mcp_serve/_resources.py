"""MCP resources: the session's stored results, read-only (issue 23, item 6).

Every result a call of the session produced is kept whole in its result store (the model
pages a clipped one back with ``use_capability``'s ``session:tool_result``). Over MCP the
client lists them with ``resources/list`` and reads one with ``resources/read`` as
``callgate://result/<ref>`` (``tr-…``, the ref the clip marker shows), without a tool call
and without the model's context. There is no write, subscribe or delete: the resources are
read-only views of what already happened. A joined session (``--session NAME``) also
reads the results an earlier connection recorded, by ref.
"""

from __future__ import annotations

import re

import mcp_types as types
from callgate.host import Session
from mcp.shared.exceptions import MCPError

PREFIX = "callgate://result/"
TEMPLATE = PREFIX + "{ref}"
_REF = re.compile(r"tr-[0-9a-f]{24}")
#: the MCP spec's "resource not found" error code
RESOURCE_NOT_FOUND = -32002
#: ``resources/list`` shows the newest results, at most this many
LIST_MAX = 500


def list_results(session: Session) -> types.ListResourcesResult:
    items = session.results.listing()[-LIST_MAX:]
    resources = [
        types.Resource(
            uri=PREFIX + item.ref,
            name=item.ref,
            title=f"{item.tool or 'tool'} result of call {item.call_id}",
            description=f"The complete result of {item.tool or 'a tool'} call {item.call_id} "
            f"({item.total_bytes:,} bytes)",
            mime_type="text/plain",
            size=item.total_bytes,
        )
        for item in reversed(items)
    ]
    return types.ListResourcesResult(resources=resources)


def templates() -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=TEMPLATE,
                name="result",
                title="A stored tool result of this session",
                description="The complete text of one tool call's result, by its result_ref (tr-…)",
                mime_type="text/plain",
            )
        ]
    )


def read_result(session: Session, uri: str) -> types.ReadResourceResult:
    ref = uri[len(PREFIX) :] if uri.startswith(PREFIX) else None
    if ref is None or not _REF.fullmatch(ref):
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"unknown resource {uri!r}: callgate serves "
            f"{TEMPLATE} (a result_ref such as tr-0123abcd…)",
        )
    item = session.results.by_ref(ref)
    if item is None:
        raise MCPError(
            code=RESOURCE_NOT_FOUND,
            message=f"no stored result {ref} in this session (never made, or no longer retained)",
        )
    try:
        text = item.load().decode("utf-8", "replace")
    except Exception as exc:  # evicted between the lookup and the read
        raise MCPError(code=RESOURCE_NOT_FOUND, message=str(exc)) from None
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)]
    )


__all__ = ["PREFIX", "TEMPLATE", "list_results", "read_result", "templates"]
