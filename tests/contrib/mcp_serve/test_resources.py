"""The session's stored results as read-only MCP resources (issue 23, item 6)."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from .test_server import ERAS, run, served, text_of


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("hello world\n")
    (w / "big.txt").write_text("".join(f"row {i:05d}\n" for i in range(20000)))
    return w


@pytest.mark.parametrize("mode", ERAS)
def test_results_are_listed_and_read_whole_as_callgate_result_uris(ws: Path, mode: str) -> None:
    async def scenario() -> None:
        async with served(ws, mode=mode, config={"results": {"max_chars": 2000}}) as (
            _,
            client,
            _kit,
        ):
            assert (await client.list_resources()).resources == []
            small = await client.call_tool("peek", {"path": "a.txt"})
            big = await client.call_tool("peek", {"path": "big.txt"})
            assert text_of(small) == "hello world\n"
            assert len(text_of(big)) < 3000  # clipped for the model
            listed = (await client.list_resources()).resources
            assert len(listed) == 2
            newest, oldest = listed
            assert str(newest.uri).startswith("callgate://result/tr-")
            assert newest.mime_type == "text/plain" and newest.size == 20000 * 10
            assert newest.title == "peek result of call mcp-2"
            assert oldest.size == len("hello world\n")
            read = await client.read_resource(str(newest.uri))
            [content] = read.contents
            assert isinstance(content, types.TextResourceContents)
            assert content.text == (ws / "big.txt").read_text()  # the complete result
            read = await client.read_resource(str(oldest.uri))
            assert read.contents[0].text == "hello world\n"  # type: ignore[union-attr]
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["callgate://result/{ref}"]
            for uri in (
                "callgate://result/tr-000000000000000000000000",
                "callgate://result/../../etc/passwd",
                "file:///etc/passwd",
            ):
                with pytest.raises(MCPError):
                    await client.read_resource(uri)

    run(scenario)
