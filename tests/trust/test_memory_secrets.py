"""Memory refuses credentials in the common formats, and still stores ordinary notes.

Attack (issue 30, item 7): ``remember`` stored 13 of 27 common key formats (AWS secret
key, GitHub fine-grained PAT, OpenAI ``sk-proj-``, Anthropic ``sk-ant-``, Google ``AIza``,
npm, Hugging Face, Azure storage key, Basic auth, ``password = …``, a token split by a
zero-width character, a base64-encoded token). Every value below is a realistic fake, made
from a seeded generator at run time (nothing here is a live key), and goes through the
front door: a ``remember`` call in a session with the memory plugin.
"""

from __future__ import annotations

import base64
import os
import random
import string
from collections.abc import Callable
from pathlib import Path

import callgate_memory
import pytest
from callgate.testing import CallgateSession
from callgate_memory import MEMORY

_rng = random.Random(30)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


def r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


GHP = "ghp_" + r(ALNUM, 36)

#: (what, text a model might ask to remember)
CREDENTIALS: list[tuple[str, str]] = [
    ("AWS access key id", f"aws_access_key_id = AKIA{r(UPPER_DIGITS, 16)}"),
    ("AWS secret access key", f"aws_secret_access_key = {r(B64, 40)}"),
    ("AWS secret in env form", f"export AWS_SECRET_ACCESS_KEY={r(B64, 40)}"),
    ("GitHub classic PAT", f"push with {GHP}"),
    ("GitHub OAuth token", f"gho_{r(ALNUM, 36)}"),
    ("GitHub fine-grained PAT", f"GITHUB_TOKEN github_pat_11{r(UPPER_DIGITS, 20)}_{r(ALNUM, 59)}"),
    ("GitLab PAT", f"glpat-{r(URLSAFE, 20)}"),
    ("Slack bot token", f"xoxb-{r(string.digits, 12)}-{r(string.digits, 13)}-{r(ALNUM, 24)}"),
    ("Slack webhook", "https://hooks.slack.com/services/T" + r(UPPER_DIGITS, 8) + "/B"
     + r(UPPER_DIGITS, 8) + "/" + r(ALNUM, 24)),
    ("Stripe secret key", f"sk_live_{r(ALNUM, 24)}"),
    ("Stripe restricted key", f"rk_live_{r(ALNUM, 24)}"),
    ("OpenAI legacy key", f"sk-{r(ALNUM, 20)}T3BlbkFJ{r(ALNUM, 20)}"),
    ("OpenAI project key", f"OPENAI_API_KEY: sk-proj-{r(URLSAFE, 156)}"),
    ("Anthropic key", f"use sk-ant-api03-{r(URLSAFE, 93)}AA for the evals"),
    ("Google API key", f"maps key AIza{r(URLSAFE, 35)}"),
    ("Google OAuth client secret", f"client secret GOCSPX-{r(URLSAFE, 28)}"),
    ("npm token", f"npm_{r(ALNUM, 36)}"),
    ("npmrc auth token", f"//registry.npmjs.org/:_authToken=npm_{r(ALNUM, 36)}"),
    ("Hugging Face token", f"HF token hf_{r(string.ascii_letters, 34)}"),
    ("PyPI token", f"pypi-AgEIcHlwaS5vcmc{r(URLSAFE, 70)}"),
    ("Azure storage connection string",
     f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={r(B64, 86)}==;"
     "EndpointSuffix=core.windows.net"),
    ("Azure storage key alone", f"AZURE_STORAGE_KEY={r(B64, 86)}=="),
    ("private key block", "-----BEGIN RSA PRIVATE KEY-----\n" + r(B64, 64) + "\n"),
    ("OpenSSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + r(B64, 70) + "\n"),
    ("JWT", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.urlsafe_b64encode(
        b'{"sub":"1234567890","name":"deploy"}').decode().rstrip("=") + "." + r(URLSAFE, 43)),
    ("Bearer header", f"curl -H 'Authorization: Bearer {r(HEX, 40)}' api/"),
    ("Basic auth URL", f"https://deploy:{r(ALNUM, 14)}@ci.example.com/hook"),
    ("Basic auth header", "Authorization: Basic "
     + base64.b64encode(f"deploy:{r(ALNUM, 12)}".encode()).decode()),
    ("database URL with password", f"postgres://app:{r(ALNUM, 16)}@db.internal:5432/app"),
    ("password assignment", "password = hunter2-" + r(ALNUM, 6)),
    ("password in YAML", "db:\n  user: app\n  password: " + r(ALNUM, 14)),
    ("password in env", f"DB_PASSWORD={r(ALNUM, 16)}"),
    ("quoted secret in code", f'API_SECRET = "{r(ALNUM, 32)}"'),
    ("SendGrid key", f"SG.{r(URLSAFE, 22)}.{r(URLSAFE, 43)}"),
    ("Twilio key", f"SK{r(HEX, 32)}"),
    ("Telegram bot token", f"{r(string.digits, 10)}:AA{r(URLSAFE, 33)}"),
    ("zero-width split GitHub token", GHP[:10] + "\u200b" + GHP[10:25] + "\u2060" + GHP[25:]),
    ("zero-width split AWS key id", "AKIA" + "\u200d".join(r(UPPER_DIGITS, 16))),
    ("base64-encoded GitHub token", "token (b64): " + base64.b64encode(GHP.encode()).decode()),
    ("base64-encoded key in a line",
     base64.b64encode(f"aws_access_key_id=AKIA{r(UPPER_DIGITS, 16)}".encode()).decode()),
]

#: Ordinary notes: each must still be stored.
NOTES: list[str] = [
    "Commit 3fa2b1c07d9e4e21aabbccddeeff001122334455 added the retry loop.",
    "git log shows a1b2c3d, 9f8e7d6 and " + r(HEX, 40) + " on main.",
    "The build cache key is " + r(HEX, 64) + " (sha256 of uv.lock).",
    "Image digest sha256:" + r(HEX, 64),
    "Request ids look like 123e4567-e89b-12d3-a456-426614174000.",
    "Config lives at /usr/local/lib/python3.11/site-packages/callgate/_config.py and "
    "~/.config/callgate/config.toml.",
    "The deploy token is in 1Password, item 'CI deploy'; bearer auth is used.",
    "The password is read from $DB_PASSWORD at start-up; never hard-code it.",
    'password = os.environ["DB_PASSWORD"]',
    "password: ${{ secrets.DB_PASSWORD }}",
    "token = get_token(scope='read')",
    "Use https://github.com/acme/widgets/pull/1234 as the example.",
    "Email ops@example.com about the 10.0.0.12:5432 database.",
    "Run npm_config_cache=/tmp/npm npm ci in CI; hf_hub_download fetches the weights.",
    "Tests use scikit-learn (sklearn) 1.5.2 and the sk-learn docs.",
    "ARN arn:aws:iam::123456789012:role/deploy-role is assumed by the runner.",
    "Base64 of hello world is aGVsbG8gd29ybGQ= and that is fine.",
    "The long identifier ProcessOrderRequestValidatorFactoryImplementation is generated.",
    "Colours: #1f2937, #f9fafb; version 2.14.0-rc.1+build.5.",
    "Set the sort_key = created_at and cache_key = user:1234:profile.",
    "Basic usage: run `make test` then `make lint`.",
    "Call the model with max_tokens = 4096 and tokenizer = tiktoken-cl100k.",
    "password_min_length = 12; the secret: rotate keys every 90 days.",
    "api_key: <your-key-here> in the example config; SECRET_KEY = settings.SECRET_KEY",
    "npm integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7k"
    "xvUdBeoGlODJ6+SfaPg== is pinned.",
    "Docs say: " + base64.b64encode(b"the quick brown fox jumps over the lazy dog").decode(),
    "Token: see the wiki page about onboarding.",
]


@pytest.fixture
def memory(callgate_session: Callable[..., CallgateSession]) -> CallgateSession:
    return callgate_session(plugins=[callgate_memory])


def _stored(s: CallgateSession) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for scope in ("project", "global"):
        root = Path(s.session.extension(MEMORY).directories[scope])
        for directory, _dirs, files in os.walk(root):
            for name in files:
                out[os.path.join(directory, name)] = (Path(directory) / name).read_bytes()
    return out


@pytest.mark.parametrize("what,text", CREDENTIALS, ids=[w for w, _ in CREDENTIALS])
def test_attack_credential_formats_are_refused_and_nothing_is_stored(memory, what, text):
    before = _stored(memory)
    for args in ({"description": "deploy notes", "body": text},
                 {"description": text.splitlines()[0][:180], "body": "see the description"}):
        if "\n" in text and args["body"] != text:
            continue
        result = memory.call("remember", args)
        assert result.is_error, f"{what} was stored"
        assert result.error.signature == memory.argument_signature(
            "remember", "MEMORY_CREDENTIAL"), result.text
        assert "Nothing was saved" in result.text
        assert _stored(memory) == before


def test_the_credential_list_has_every_format_of_the_issue():
    assert len(CREDENTIALS) >= 27


@pytest.mark.parametrize("note", NOTES)
def test_ordinary_notes_are_still_stored(memory, note):
    memory.expect_ok("remember", {"description": "a project fact", "body": note})
