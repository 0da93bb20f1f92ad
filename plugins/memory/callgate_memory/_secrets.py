"""Credential-shaped strings in what a model asks to remember, found with detect-secrets.

Only the library's pattern detectors run (``analyze_string``): private key blocks,
cloud and service access keys, tokens, JWTs, passwords in URLs, plus one detector of
our own for ``Bearer`` tokens, written on the library's `RegexBasedDetector`. Its
entropy and keyword heuristics stay off (commit hashes and prose would trip them), and
its verification step, which would send the candidate to the service it belongs to,
is never called. Findings name the kind and line, never the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

import attrs

#: The detect-secrets plugins that match a credential's shape, not its randomness.
DETECTORS = (
    ("artifactory", "ArtifactoryDetector"),
    ("aws", "AWSKeyDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("basic_auth", "BasicAuthDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("jwt", "JwtTokenDetector"),
    ("mailchimp", "MailchimpDetector"),
    ("npm", "NpmDetector"),
    ("openai", "OpenAIDetector"),
    ("private_key", "PrivateKeyDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)


@attrs.frozen
class Finding:
    """One credential-shaped string: which field, which line, what kind (never the value)."""

    field: str
    line: int
    kind: str

    def describe(self) -> str:
        return f"{self.kind} in {self.field} line {self.line}"


@cache
def _detectors() -> tuple[Any, ...]:
    import importlib

    from detect_secrets.plugins.base import RegexBasedDetector

    class BearerTokenDetector(RegexBasedDetector):  # type: ignore[misc]
        """An HTTP bearer token: ``Bearer`` and 20 or more token characters."""

        secret_type = "Bearer Token"
        denylist = (re.compile(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)"),)

    found: list[Any] = [BearerTokenDetector()]
    for module, name in DETECTORS:
        plugin = importlib.import_module(f"detect_secrets.plugins.{module}")
        found.append(getattr(plugin, name)())
    return tuple(found)


def find_credentials(fields: Iterable[tuple[str, str]]) -> list[Finding]:
    """Every credential-shaped string in ``(field name, text)`` pairs, at most one per line."""
    detectors = _detectors()
    findings: list[Finding] = []
    for field, text in fields:
        for number, line in enumerate(text.splitlines(), 1):
            for detector in detectors:
                if any(True for _ in detector.analyze_string(line)):
                    findings.append(Finding(field, number, detector.secret_type))
                    break
    return findings


def summary(findings: Sequence[Finding], limit: int = 3) -> str:
    shown = "; ".join(f.describe() for f in findings[:limit])
    if len(findings) > limit:
        shown += f"; and {len(findings) - limit} more"
    return shown
