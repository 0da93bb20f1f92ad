"""Updating facts: by name, by id and revision; and every refusal leaves the store as it was."""

from __future__ import annotations

import re

import pytest

from .conftest import remember, search, store, tree


def _id(text: str) -> str:
    match = re.search(r"id=(m-[0-9a-f]{16})", text)
    assert match, text
    return match.group(1)


def test_reusing_a_name_updates_that_fact(memory):
    s = memory()
    first = remember(s, name="port", description="DB port", body="5433")
    second = remember(s, name="port", description="DB port", body="5434 since the upgrade")
    assert second.startswith("Updated memory project/port") and "revision=2" in second
    assert _id(first) == _id(second)
    text = (store(s) / "port.md").read_text()
    assert "5434 since the upgrade" in text and "revision: 2" in text
    read = s.expect_ok("memory", {"operation": "read", "name": "project/port"})
    assert "revision=2" in read and "5433" not in read


def test_an_update_by_id_and_current_revision(memory):
    s = memory()
    fact_id = _id(remember(s, name="port", body="5433"))
    out = remember(s, id=fact_id, expected_revision=1, body="5434")
    assert "revision=2" in out and _id(out) == fact_id


def test_an_update_with_a_stale_revision_is_refused_and_the_file_is_unchanged(memory):
    s = memory()
    fact_id = _id(remember(s, name="port", body="5433"))
    remember(s, name="port", body="5434")  # revision 2 now
    before = tree(store(s))
    result = s.expect_error("remember", {"id": fact_id, "expected_revision": 1,
                                         "description": "x", "body": "5435"},
                            kind="stale_version", signature="MEMORY_STALE_REVISION")
    assert "at revision 2, not 1" in result.text
    assert tree(store(s)) == before
    by_name = s.expect_error("remember", {"name": "port", "expected_revision": 5,
                                          "description": "x", "body": "5435"},
                             kind="stale_version")
    assert "revision=2" in by_name.text
    assert tree(store(s)) == before


def test_an_expected_revision_for_a_fact_that_does_not_exist_is_refused(memory):
    s = memory()
    s.expect_error("remember", {"name": "nope", "expected_revision": 1, "description": "x",
                                "body": "y"}, kind="not_found")
    assert tree(store(s)) == {}


def test_a_fact_keeps_its_name_and_scope(memory):
    s = memory()
    fact_id = _id(remember(s, name="port"))
    s.expect_error("remember", {"id": fact_id, "name": "other", "description": "x",
                                "body": "y"}, kind="invalid_arguments",
                   signature=s.argument_signature("remember", "MEMORY_NAME_CHANGE"))
    s.expect_error("remember", {"id": fact_id, "scope": "global", "description": "x",
                                "body": "y"}, kind="invalid_arguments",
                   signature=s.argument_signature("remember", "MEMORY_SCOPE_CHANGE"))


def test_a_second_active_fact_for_a_subject_key_is_refused_naming_the_holder(memory):
    s = memory()
    holder = _id(remember(s, name="deploy", subject_key="deploy.command", body="make ship"))
    before = tree(store(s))
    result = s.expect_error("remember", {"name": "deploy-2", "subject_key": "deploy.command",
                                         "description": "x", "body": "make release"},
                            kind="already_exists", signature="MEMORY_SUBJECT_TAKEN")
    assert "project/deploy" in result.text and holder in result.text
    assert tree(store(s)) == before
    # updating the holder itself is fine, and another scope may hold the same key
    remember(s, name="deploy", subject_key="deploy.command", body="make ship-it")
    remember(s, name="deploy", scope="global", subject_key="deploy.command", body="x")


def test_a_body_over_max_fact_bytes_is_refused(memory):
    s = memory(config={"memory": {"max_fact_bytes": 1024}})
    result = s.expect_error("remember", {"description": "big", "body": "é" * 513},
                            kind="invalid_arguments",
                            signature=s.argument_signature("remember", "MEMORY_TOO_LARGE"))
    assert "1026 bytes" in result.text and "1024" in result.text
    assert tree(store(s)) == {}
    remember(s, body="é" * 512)


@pytest.mark.parametrize("body", [
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n",
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "curl -H 'Authorization: Bearer 8f2a9c41d7e6b3a05f1e2d9c8b7a6f5e4d3c2b1a' api/",
    "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "deploy with https://deploy:s3cretPassw0rd@ci.example.com/hook",
])
def test_a_credential_shaped_body_is_refused_and_nothing_is_written(memory, body):
    s = memory()
    remember(s, name="existing")
    before = tree(store(s))
    result = s.expect_error("remember", {"name": "existing", "description": "creds",
                                         "body": body},
                            kind="invalid_arguments",
                            signature=s.argument_signature("remember", "MEMORY_CREDENTIAL"))
    assert "Nothing was saved" in result.text
    secret_part = body.split()[-1].strip("'/")
    assert secret_part not in result.text  # the value is never echoed back
    assert tree(store(s)) == before


def test_a_credential_in_the_description_is_refused_too(memory):
    s = memory()
    s.expect_error("remember", {"description": "key AKIAIOSFODNN7EXAMPLE", "body": "x"},
                   kind="invalid_arguments",
                   signature=s.argument_signature("remember", "MEMORY_CREDENTIAL"))
    assert tree(store(s)) == {}


def test_prose_about_credentials_is_not_refused(memory):
    s = memory()
    remember(s, description="Where the deploy token is",
             body="The deploy token is in 1Password, item 'CI deploy'; bearer auth is used. "
                  "Commit 3fa2b1c07d9e4e21aabbccddeeff001122334455 added it.")


@pytest.mark.parametrize("value,why", [
    ("tomorrow", "not an RFC 3339"), ("2026-02-30", "not a real date"),
    ("2026-05-01T10:00:00", "no UTC offset"), ("2001-01-01", "already past"),
])
def test_a_bad_expires_at_is_refused(memory, value, why):
    s = memory()
    result = s.expect_error("remember", {"description": "x", "body": "y",
                                         "expires_at": value},
                            kind="invalid_arguments",
                            signature=s.argument_signature("remember", "MEMORY_BAD_EXPIRY"))
    assert why in result.text
    assert tree(store(s)) == {}


def test_expires_at_is_kept_and_never_clears_it(memory):
    s = memory()
    assert "expires 2999-01-01" in remember(s, name="t", expires_at="2999-01-01")
    assert "expires_at: '2999-01-01'" in (store(s) / "t.md").read_text()
    remember(s, name="t", body="again")  # left out: kept
    assert "2999-01-01" in (store(s) / "t.md").read_text()
    remember(s, name="t", expires_at="never")
    assert "expires_at" not in (store(s) / "t.md").read_text()


def test_an_unreadable_fact_file_is_reported_and_never_overwritten(memory):
    s = memory()
    remember(s, name="ok")
    broken = store(s) / "broken.md"
    broken.write_text("---\nid: [unclosed\n---\nbody\n")
    listing = s.expect_ok("memory", {"operation": "list"})
    assert "project/broken: its front matter is not valid YAML" in listing
    before = tree(store(s))
    s.expect_error("remember", {"name": "broken", "description": "x", "body": "y"},
                   kind="tool_error", signature="MEMORY_UNREADABLE")
    assert tree(store(s)) == before
    s.expect_error("memory", {"operation": "read", "name": "broken"}, kind="tool_error")
    assert "Forgot project/broken" in s.expect_ok("forget", {"name": "broken"})


def test_derived_names_never_overwrite_another_fact(memory):
    s = memory()
    one = remember(s, description="Build command", body="make")
    two = remember(s, description="Build command", body="ninja")
    assert "project/build-command:" in one and "project/build-command-2:" in two
    assert "ninja" in search(s, "ninja")
