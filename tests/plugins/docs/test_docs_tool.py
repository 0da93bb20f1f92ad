"""The docs tool through the pipeline: callgate's own docs, a project's docs, confinement."""

from __future__ import annotations

import os
import re
from pathlib import Path

from callgate.testing import run_replay
from callgate_docs import host_docs_dir

from .conftest import call

REPO_DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_searching_callgates_own_docs_finds_the_section_on_permissions(docs):
    s = docs()
    out = call(s, operation="search", query="permissions")
    first = out.splitlines()[1]
    assert first.startswith("1. callgate:permissions.md#"), out
    assert "callgate:config.md#permissions" in out
    plan = call(s, operation="search", query="plan mode", limit=1)
    assert "1. callgate:permissions.md#plan-mode" in plan and "2." not in plan


def test_read_returns_one_section_with_its_source_and_exact_lines(docs):
    s = docs()
    out = call(s, operation="read", section_id="callgate:permissions.md#plan-mode")
    header = out.splitlines()[0]
    m = re.fullmatch(r"source: callgate:permissions\.md lines (\d+)-(\d+) \((.+)\)", header)
    assert m, header
    start, end = int(m.group(1)), int(m.group(2))
    lines = (REPO_DOCS / "permissions.md").read_text().splitlines()
    assert lines[start - 1] == "## Plan mode"
    body = out.split("\n\n", 1)[1]
    assert body == "\n".join(lines[start - 1:end])
    assert "## Signatures" not in body


def test_read_with_a_path_lists_that_documents_sections(docs):
    out = call(docs(), operation="read", path="docs/setup.md")
    assert out.splitlines()[0] == "docs/setup.md: 4 sections"
    for section_id in ("docs/setup.md#setup", "docs/setup.md#database",
                       "docs/setup.md#billing", "docs/setup.md#database-1"):
        assert f"- {section_id} — " in out
    assert "not-a-heading" not in out  # a # inside a code block is not a heading


def test_project_docs_are_searched_and_read(docs):
    s = docs()
    out = call(s, operation="search", query="postgres port")
    assert "docs/setup.md#database" in out.splitlines()[1]
    section = call(s, operation="read", section_id="docs/setup.md#billing")
    assert section.startswith("source: docs/setup.md lines 14-17 (Setup › Billing)")
    assert "Invoices are sent on the 1st." in section


def test_list_shows_both_doc_sets_and_what_was_skipped(docs):
    out = call(docs(paths=["README.md", "docs", "../elsewhere", "missing"]), operation="list")
    assert "callgate's own documentation:" in out
    assert "- callgate:config.md — Configuration reference" in out
    assert "- docs/setup.md — Setup (4 sections)" in out and "- README.md — Shop" in out
    assert "- ../elsewhere: outside the workspace" in out and "- missing: not found" in out


def test_a_dotdot_path_is_refused(docs):
    s = docs()
    before = s.snapshot()
    for args in ({"operation": "read", "path": "../etc/passwd"},
                 {"operation": "read", "section_id": "../../etc/passwd#root"},
                 {"operation": "read", "path": "docs/../../outside.md"}):
        s.expect_error("docs", args, kind="outside_workspace")
    s.expect_error("docs", {"operation": "read", "path": "callgate:../../etc/passwd"},
                   kind="outside_workspace", signature="DOCS_BAD_PATH")
    s.assert_unchanged(before)


def test_a_file_not_in_the_catalogue_is_not_read(docs):
    s = docs(files={"secret.md": "# Secret\n\nhunter2\n", "docs/a.md": "# A\n\nx\n"},
             paths=["docs"])
    s.expect_error("docs", {"operation": "read", "path": "secret.md"}, kind="not_found")
    assert "secret.md" not in call(s, operation="search", query="hunter2 secret")


def test_a_symlink_in_a_docs_folder_leading_outside_is_skipped(docs, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nplatypus\n")
    s = docs()
    os.symlink(outside, s.workspace / "docs" / "link.md")
    out = call(s, operation="list")
    assert "docs/link.md: leads outside the workspace" in out
    assert call(s, operation="search", query="platypus").startswith("No documentation")


def test_an_edited_document_is_searched_with_its_new_text(docs):
    s = docs()
    assert "No documentation section matches" in call(s, operation="search", query="wombat")
    s.write("docs/setup.md", "# Setup\n\n## Wombats\n\nThe wombat service runs nightly.\n")
    out = call(s, operation="search", query="wombat")
    assert "docs/setup.md#wombats" in out
    os.unlink(s.workspace / "docs" / "setup.md")
    assert "No documentation section matches" in call(s, operation="search", query="wombat")


def test_bad_requests_are_explained(docs):
    s = docs()
    s.expect_error("docs", {"operation": "search"}, kind="invalid_arguments")
    s.expect_error("docs", {"operation": "read"}, kind="invalid_arguments")
    s.expect_error("docs", {"operation": "read", "section_id": "no-hash"},
                   kind="invalid_arguments")
    s.expect_error("docs", {"operation": "read", "section_id": "docs/setup.md#nope"},
                   kind="not_found", signature="DOCS_NO_SECTION")
    s.expect_error("docs", {"operation": "search", "query": "x", "limit": 11},
                   kind="invalid_arguments")


def test_host_docs_can_be_switched_off(docs):
    out = call(docs(host_docs=False), operation="list")
    assert "callgate:" not in out and "docs/setup.md" in out


def test_the_docs_tool_is_hidden_by_default(callgate_session):
    import callgate_capability
    import callgate_docs

    s = callgate_session(plugins=[callgate_docs, callgate_capability], surface="lean")
    assert "docs" not in s.session.tool_names()
    out = s.expect_ok("use_capability", {"action": "call", "capability_id": "tool:docs",
                                         "arguments": {"operation": "search",
                                                       "query": "surface mode"}})
    assert "callgate:surfaces.md#" in out


def test_replay_searches_and_reads_callgates_docs(tmp_path):
    results = run_replay([
        {"id": "d1", "name": "docs", "arguments": {"operation": "search", "query": "permissions"}},
        {"id": "d2", "name": "docs", "arguments": {"operation": "read",
                                                   "section_id": "callgate:config.md#memory-"
                                                                 "callgate-memory"}},
        {"id": "d3", "name": "docs", "arguments": {"operation": "read", "path": "../x.md"}},
    ], tmp_path, "--surface", "full", env={"CALLGATE_LOAD_PLUGINS": "docs"})
    assert "callgate:permissions.md#" in results[0]["content"]
    assert "max_fact_bytes" in results[1]["content"], results[1]
    assert results[2]["error"]["kind"] == "outside_workspace"


def test_the_checkout_reads_the_repository_docs():
    assert host_docs_dir() == REPO_DOCS
