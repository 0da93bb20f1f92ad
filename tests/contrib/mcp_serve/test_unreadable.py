"""Finding the id of a JSON-RPC line the parser gave up on, and the error that answers it
(the end-to-end attacks are in tests/trust/test_http_bounds.py)."""

from __future__ import annotations

import mcp_types as types
import pytest
from callgate_mcp_serve._unreadable import answer_for, request_id


@pytest.mark.parametrize(("raw", "found"), [
    ('{"jsonrpc": "2.0", "id": 7, "method": "x", "params": {"a": "\\ud800"}}', 7),
    ('{"params": {"id": 1, "a": "\\"id\\": 2"}, "id": "top", "method": "x"}', "top"),
    ('{"method": "id", "params": {"x": [{"id": 3}]}}', None),   # "id" as a value, or nested
    ('{"jsonrpc": "2.0", "id": "a\\"b", "method": ', 'a"b'),      # cut short
    ('{"id": true, "method": "x"}', None),                          # not an id
    ('{"id": "\\ud800", "method": "x"}', None),                     # cannot be sent back
    ('[' * 100_000 + '{"id": 5}' + ']' * 100_000, None),            # not top level
    ('{"a": ' + '[' * 100_000 + ']' * 100_000 + ', "id": 9}', 9),   # past a deep value
    ("not json", None),
])
def test_the_top_level_id_is_found_by_scanning(raw: str, found: object) -> None:
    assert request_id(raw) == found


def _failure(raw: str) -> Exception:
    try:
        types.jsonrpc_message_adapter.validate_json(raw, by_name=False)
    except Exception as exc:
        return exc
    raise AssertionError("the SDK read it")


def test_requests_are_answered_and_responses_and_notifications_are_not() -> None:
    answer = answer_for(_failure('{"jsonrpc": "2.0", "id": 4, "method": "x", "params": '
                                 '{"p": "\\udc00"}}'))
    assert answer is not None and answer.id == 4 and answer.error.code == types.PARSE_ERROR
    assert "surrogate" in answer.error.message
    answer = answer_for(_failure('{"jsonrpc": "2.0", "id": 5, "params": {}}'))
    assert answer is not None and answer.id == 5
    assert answer.error.code == types.INVALID_REQUEST
    # a malformed response or notification is never answered
    assert answer_for(_failure('{"jsonrpc": "2.0", "id": 6, "result": 1, "error": 2}')) is None
    assert answer_for(_failure('{"jsonrpc": "1.0", "method": "notifications/x"}')) is None
    assert answer_for(RuntimeError("not a parse failure")) is None
