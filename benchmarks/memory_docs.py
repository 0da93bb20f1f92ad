"""``memory`` search over 10,000 facts and ``docs`` search over callgate's docs, beside a plain
``grep -ri`` over the same files, in one run (issue 19).

The facts are generated into a temporary ``CALLGATE_HOME`` as ``remember`` writes them (YAML
front matter, then a body), from a fixed-seed vocabulary in which some words are rare and some
common, so queries match anywhere from a handful to thousands of facts. For each query the
rounds are interleaved (tool, grep) after one warm-up round, so both see the same page cache
and load; figures are medians, ratios are between medians of the same run:

- ``memory``: ``memory`` ``search`` through ``Session.run_batch`` (validation, the kept index,
  ranking, snippets, shaping), the index kept between calls;
- ``memory_scan``: the same with the inotify change feed off, so every call stats all 10,000
  files (what any other OS gets; shows what the feed saves);
- ``memory_edited``: the call right after one fact file was edited by hand (one file re-read);
- ``docs``: ``docs`` ``search`` over callgate's own docs/ (the packaged doc set);
- ``grep``: ``grep -ri -e WORD ... DIR`` over the same files, output drained.

Also reported: the first search of a fresh process (parsing every fact file; not a target).
Target: ≤ 20 ms median per query for ``memory`` and ``docs``.

    .venv/bin/python benchmarks/memory_docs.py [--facts 10000] [--repeat 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
from callgate_memory import MEMORY

MEMORY_QUERIES = ("kestrel", "deploy database port", "staging cache timeout",
                  "quartz lantern", "user prefers tabs")
DOCS_QUERIES = ("permissions", "plan mode", "mcp server timeout", "config file location",
                "result truncation paging")
TARGET_MS = 20.0

COMMON = ("deploy", "database", "port", "cache", "timeout", "service", "build", "test", "user",
          "prefers", "config", "api", "staging", "release", "branch", "review", "queue",
          "worker", "token", "endpoint", "schema", "migration", "log", "error", "retry",
          "backup")
RARE = ("kestrel", "quartz", "lantern", "obsidian", "marmot", "juniper", "saffron", "tundra",
        "zephyr", "cobalt", "lichen", "quill")


def _timed(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def make_facts(directory: Path, count: int, seed: int = 19) -> None:
    """``count`` fact files, as ``remember`` writes them, plus a MEMORY.md of managed lines."""
    import frontmatter

    rng = random.Random(seed)
    filler = [f"w{n:04d}" for n in range(3000)]  # a long tail of words
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(count):
        words = rng.sample(COMMON, 3) + rng.sample(filler, 25)
        if rng.random() < 0.02:
            words.append(rng.choice(RARE))
        rng.shuffle(words)
        name = f"fact-{i:05d}"
        description = " ".join(words[:6])
        meta = {"id": f"m-{i:016x}", "revision": 1, "created_at": "2026-01-01T00:00:00Z",
                "updated_at": "2026-01-01T00:00:00Z", "name": name, "title": description,
                "description": description, "type": rng.choice(["user", "project", "feedback"]),
                "scope": "project", "activation": "relevant",
                "keywords": rng.sample(COMMON, 2)}
        post = frontmatter.Post(" ".join(words) + ".", **meta)
        (directory / f"{name}.md").write_text(frontmatter.dumps(post, sort_keys=False) + "\n")
        lines.append(f"- [{description}]({name}.md) — [project/{meta['type']}] {description}")
    (directory / "MEMORY.md").write_text("# Memory\n\n" + "\n".join(lines) + "\n")


def _grep(directory: Path, query: str) -> None:
    args = ["grep", "-ri"]
    for word in query.split():
        args += ["-e", word]
    subprocess.run([*args, "--", str(directory)], stdout=subprocess.PIPE,
                   stderr=subprocess.DEVNULL, check=False)


def _samples(variants: dict[str, Any], repeat: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(repeat + 1):
        for name, fn in variants.items():
            seconds = _timed(fn)
            if round_:
                samples[name].append(seconds)
    return samples


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median_ms": round(statistics.median(values) * 1e3, 3),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1e3, 3),
            "n": len(values)}


def run(facts: int = 10_000, repeat: int = 7) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="callgate-bench-memory-"))
    previous = os.environ.get("CALLGATE_HOME")
    os.environ["CALLGATE_HOME"] = str(home)
    try:
        return _run(home, facts, repeat)
    finally:
        if previous is None:
            os.environ.pop("CALLGATE_HOME", None)
        else:
            os.environ["CALLGATE_HOME"] = previous
        shutil.rmtree(home, ignore_errors=True)


def _run(home: Path, facts: int, repeat: int) -> dict[str, Any]:
    import callgate_docs
    import callgate_memory
    from callgate import ToolCall, sync
    from callgate_memory import _changes
    from callgate_memory import _index as memory_index

    workspace = home / "workspace"
    workspace.mkdir()
    host = sync.Host.boot({}, plugins=[callgate_memory, callgate_docs], entrypoints=False,
                          surface="full")
    session = host.open_session(workspace)
    store = Path(session.session.extension(MEMORY).directories["project"])
    started = time.perf_counter()
    make_facts(store, facts)
    generated_s = time.perf_counter() - started
    docs_dir = callgate_docs.host_docs_dir()
    assert docs_dir is not None

    def call(name: str, arguments: dict[str, Any], sess: Any = session) -> str:
        [result] = sess.run_batch([ToolCall("b", name, arguments)])
        assert not result.is_error, result.text
        return result.text

    def search(query: str, sess: Any = session) -> str:
        return call("memory", {"operation": "search", "query": query}, sess)

    cold_s = _timed(lambda: search(MEMORY_QUERIES[0]))
    hits = {q: len(re.findall(r"^\d+\. ", search(q), re.M)) for q in MEMORY_QUERIES}

    # a second index over the same files with the inotify feed off: every call stats them all
    from callgate_toolkit.watch import DirectoryWatcher

    scan_feed = _changes.ChangeFeed(DirectoryWatcher(enabled=False))
    real_feed = memory_index.FEED
    memory_index.FEED = scan_feed
    try:
        scan_index = memory_index.FactIndex(session.session.extension(MEMORY).directories)
    finally:
        memory_index.FEED = real_feed
    scan_index.refresh()

    def scan_search(query: str) -> None:
        scan_index.refresh()
        scan_index.search(query, now=time.time(), limit=8, scopes=("project", "global"))

    edited = store / "fact-00042.md"

    def edited_search(query: str) -> None:
        text = edited.read_text()  # a hand edit: one space more or less at the end
        edited.write_text(text[:-1] if text.endswith(" ") else text + " ")
        search(query)

    memory_rows = []
    for query in MEMORY_QUERIES:
        samples = _samples({"memory": lambda q=query: search(q),
                            "memory_scan": lambda q=query: scan_search(q),
                            "memory_edited": lambda q=query: edited_search(q),
                            "grep": lambda q=query: _grep(store, q)}, repeat)
        row = {"query": query, "hits": hits[query],
               **{name: _summary(values) for name, values in samples.items()}}
        row["memory_over_grep"] = round(row["memory"]["median_ms"] / row["grep"]["median_ms"], 3)
        memory_rows.append(row)

    docs_rows = []
    for query in DOCS_QUERIES:
        first = call("docs", {"operation": "search", "query": query})
        samples = _samples({"docs": lambda q=query: call("docs", {"operation": "search",
                                                                  "query": q}),
                            "grep": lambda q=query: _grep(docs_dir, q)}, repeat)
        row = {"query": query, "top": first.splitlines()[1].split(" — ")[0][3:]
               if "\n1. " in first else None,
               **{name: _summary(values) for name, values in samples.items()}}
        row["docs_over_grep"] = round(row["docs"]["median_ms"] / row["grep"]["median_ms"], 3)
        docs_rows.append(row)
    session.close()
    host.close()

    def overall(rows: list[dict[str, Any]], key: str) -> float:
        return round(statistics.median(r[key]["median_ms"] for r in rows), 3)

    return {
        "facts": facts, "repeat": repeat, "python": sys.version.split()[0],
        "generated_s": round(generated_s, 2), "cold_first_search_ms": round(cold_s * 1e3, 1),
        "docs_files": len(list(docs_dir.glob("*.md"))),
        "memory": memory_rows, "docs": docs_rows,
        "memory_median_ms": overall(memory_rows, "memory"),
        "memory_scan_median_ms": overall(memory_rows, "memory_scan"),
        "memory_edited_median_ms": overall(memory_rows, "memory_edited"),
        "memory_grep_median_ms": overall(memory_rows, "grep"),
        "docs_median_ms": overall(docs_rows, "docs"),
        "docs_grep_median_ms": overall(docs_rows, "grep"),
        "target_ms": TARGET_MS,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    report = run(max(10, args.facts), max(1, args.repeat))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['facts']} facts (generated in {report['generated_s']} s); first search of "
          f"a fresh process {report['cold_first_search_ms']} ms; medians in ms")
    print(f"{'memory query':28} {'hits':>5} {'memory':>8} {'scan':>8} {'edited':>8} "
          f"{'grep -ri':>9} {'mem/grep':>9}")
    for row in report["memory"]:
        print(f"{row['query']:28} {row['hits']:>5} {row['memory']['median_ms']:>8} "
              f"{row['memory_scan']['median_ms']:>8} {row['memory_edited']['median_ms']:>8} "
              f"{row['grep']['median_ms']:>9} {row['memory_over_grep']:>9}")
    print(f"{'docs query':28} {'top section':>40} {'docs':>8} {'grep -ri':>9} {'docs/grep':>9}")
    for row in report["docs"]:
        print(f"{row['query']:28} {str(row['top'])[:40]:>40} {row['docs']['median_ms']:>8} "
              f"{row['grep']['median_ms']:>9} {row['docs_over_grep']:>9}")
    print(f"overall medians: memory {report['memory_median_ms']} ms (stat scan "
          f"{report['memory_scan_median_ms']}, after an edit {report['memory_edited_median_ms']},"
          f" grep {report['memory_grep_median_ms']}); docs {report['docs_median_ms']} ms (grep "
          f"{report['docs_grep_median_ms']}); target <= {TARGET_MS} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
