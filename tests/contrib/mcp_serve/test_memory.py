"""A long ``callgate serve`` session stays bounded in memory (issue 34, item 1).

Driven by the SDK's own ``Client`` in process: many more calls than the result-memory
budget can hold, each result well under the size that goes straight to the store. Once a
result's record is committed the session keeps at most the budget of result text (and the
newest results' index), whatever the number of calls: the bytes still allocated after the
run, measured with ``tracemalloc``, stay under the budget plus a margin, while the results
produced add up to several times it.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from callgate._results.results import DEFAULT_MEMORY_BUDGET

from .test_server import run, served, text_of

CHARS = 24_000
CALLS = 1_000
MARGIN = 4 * 1024 * 1024


def test_result_memory_stays_within_the_budget_over_many_calls(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert CALLS * CHARS > 2.5 * DEFAULT_MEMORY_BUDGET  # the run outgrows the budget

    async def scenario() -> int:
        async with served(ws) as (app, client, _kit):
            for _ in range(20):  # warm-up: imports, caches, the store's pages
                await client.call_tool("bulk", {"chars": CHARS})
            assert app.session is not None
            app.session.journal.flush()
            gc.collect()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                for _ in range(CALLS):
                    r = await client.call_tool("bulk", {"chars": CHARS})
                    assert not r.is_error, text_of(r)
                app.session.journal.flush()
                await client.call_tool("bulk", {"chars": 1})  # settles what is committed
                gc.collect()
                return tracemalloc.get_traced_memory()[0] - before
            finally:
                tracemalloc.stop()

    retained = run(scenario)
    assert retained < DEFAULT_MEMORY_BUDGET + MARGIN, (
        f"{retained:,} bytes retained after {CALLS} calls of {CHARS:,} characters")
