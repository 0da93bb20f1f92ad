"""Credential-shaped strings in what a model asks to remember, found with detect-secrets.

Only the library's pattern detectors run (``analyze_string``): private key blocks,
cloud and service access keys, tokens, JWTs, passwords in URLs. What it lacks is added
as detectors of our own on the library's `RegexBasedDetector`: ``Bearer`` and ``Basic``
authorization headers, the token shapes of `TOKEN_SHAPES` (GitHub fine-grained PATs,
OpenAI project keys, Anthropic, Google, npm, Hugging Face, AWS secret keys), and values
assigned to a secret's name (``password = …``, ``DB_PASSWORD=…``; references such as
``$DB_PASSWORD`` or ``os.environ[…]`` are not values). Its entropy and keyword heuristics
stay off (commit hashes and prose would trip them), and its verification step, which
would send the candidate to the service it belongs to, is never called.

Text is checked as written and normalised (`variants`): invisible characters removed
and long base64 runs decoded, so a token split by a zero-width space or wrapped in
base64 is still the token. Findings name the kind and line, never the value.
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


#: Tokens whose shape names their issuer, which detect-secrets 1.5 does not know (GitHub's
#: fine-grained PATs, OpenAI project and service keys, Anthropic, Google, npm without an
#: ``.npmrc`` line, Hugging Face), as ``(kind, pattern)``.
TOKEN_SHAPES = (
    ("GitHub Fine-Grained Token", r"\bgithub_pat_[A-Za-z0-9_]{40,}"),
    ("GitHub Token", r"\bgh[pousr]_[A-Za-z0-9]{36,}"),
    ("OpenAI Key", r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"),
    ("Anthropic Key", r"\bsk-ant-[A-Za-z0-9_-]{32,}"),
    ("API Key (sk-)", r"\bsk-[A-Za-z0-9]{32,}\b"),
    ("Google API Key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("Google OAuth Client Secret", r"\bGOCSPX-[A-Za-z0-9_-]{24,}"),
    ("NPM Token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("Hugging Face Token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("AWS Secret Access Key",
     r"(?i)\baws[A-Za-z0-9_.-]{0,30}?[\"']?\s*(?::=|=|:)\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"),
)

#: ``name = value`` where the name ends in a word that names a secret: ``password``,
#: ``DB_PASSWORD``, ``client_secret``, ``api_key``, ``AZURE_STORAGE_KEY``, ``auth_token``.
_SECRET_NAME = (
    r"(?i)(?<![A-Za-z0-9])[A-Za-z0-9_.-]*?"
    r"(?:passw(?:or)?d|pwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"secret[_-]?key|private[_-]?key|storage[_-]?key|account[_-]?key|signing[_-]?key|"
    r"master[_-]?key|encryption[_-]?key)"
)
_ASSIGNMENT = re.compile(
    _SECRET_NAME + r"[\"'\]]{0,2}\s*(?::=|=>|==?|:)\s*"
    r"(?:(?P<quote>[\"'`])(?P<quoted>[^\"'`\s]{4,})(?P=quote)|(?P<bare>[^\s\"'`,;]{6,}))"
)
#: Values that are references or placeholders, not secrets: ``$DB_PASSWORD``, ``${{ … }}``,
#: ``os.environ[…]``, ``get_token()``, ``settings.SECRET``, ``<your-token>``, ``****``.
_REFERENCE = re.compile(
    r"^(?:[$%{<(\[@]|.*[({\[]|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$|[*xX.•-]+$)"
)
_WORDS = frozenset({"none", "null", "nil", "true", "false", "undefined", "required", "optional",
                    "string", "empty", "redacted", "changeit", "example", "present"})
_BASIC_HEADER = re.compile(r"(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")
#: Characters that draw nothing, removed before checking (a token split by U+200B is the
#: token): every format character (Cf: zero-width, bidi controls, tags, BOM, soft hyphen)
#: and the invisible letters and joiners that are not in that category.
_INVISIBLE_EXTRA = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0") | frozenset(
    chr(c) for c in (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)))
#: A run that may be base64 (or base64url) of something worth checking.
_B64_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{20,}={0,2}")
#: How deep encodings are unwrapped (base64 of base64 of a token).
_DECODE_DEPTH = 2


def _secret_value(value: str, quoted: bool) -> bool:
    """Whether an assigned value looks like a secret rather than a reference or a word."""
    if _REFERENCE.match(value) or value.lower() in _WORDS:
        return False
    if quoted:
        return True
    # unquoted prose ("password: stored in the vault") stops at the first blank; a real
    # value has a digit or a symbol, mixes case, or is long
    return (len(value) >= 12 or any(c.isdigit() for c in value)
            or not value.isalnum() or (value.lower() != value and value.upper() != value))


def _strip_invisible(text: str) -> str:
    import unicodedata

    if text.isascii():
        return text
    kept = "".join(c for c in text
                   if unicodedata.category(c) != "Cf" and c not in _INVISIBLE_EXTRA)
    return unicodedata.normalize("NFKC", kept)


def _decoded(token: str) -> str | None:
    """``token`` decoded as base64 or base64url when that gives printable text, else None."""
    import base64
    import binascii

    body = token.rstrip("=")
    padded = body + "=" * (-len(body) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            raw = decode(padded)
        except (binascii.Error, ValueError):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(text) >= 8 and sum(c.isprintable() or c in "\n\r\t" for c in text) >= \
                0.95 * len(text):
            return text
    return None


def variants(text: str, depth: int = _DECODE_DEPTH) -> list[str]:
    """``text`` and the forms a credential may hide in it: invisible characters removed
    (and compatibility forms folded, NFKC), and each long base64 run decoded."""
    out = [text]
    clean = _strip_invisible(text)
    if clean != text:
        out.append(clean)
    if depth > 0:
        for token in _B64_TOKEN.findall(clean):
            decoded = _decoded(token)
            if decoded is not None:
                out += variants(decoded, depth - 1)
    return out


@cache
def _detectors() -> tuple[Any, ...]:
    import base64
    import binascii
    import importlib

    from detect_secrets.plugins.base import RegexBasedDetector

    class BearerTokenDetector(RegexBasedDetector):  # type: ignore[misc]
        """An HTTP bearer token: ``Bearer`` and 20 or more token characters."""

        secret_type = "Bearer Token"
        denylist = (re.compile(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)"),)

    class BasicAuthHeaderDetector(RegexBasedDetector):  # type: ignore[misc]
        """``Authorization: Basic`` and the base64 of ``user:password``."""

        secret_type = "Basic Auth Header"
        denylist = (_BASIC_HEADER,)

        def analyze_string(self, string: str) -> Any:
            for match in _BASIC_HEADER.finditer(string):
                try:
                    pair = base64.b64decode(match.group(1) + "=" * (-len(match.group(1)) % 4))
                except (binascii.Error, ValueError):
                    continue
                _user, colon, password = pair.partition(b":")
                if colon and password:
                    yield match.group(1)

    class SecretAssignmentDetector(RegexBasedDetector):  # type: ignore[misc]
        """A value assigned to a name that says it is secret (``password = hunter2``,
        ``DB_PASSWORD=…``, ``client_secret: "…"``), unless it is a reference or a word."""

        secret_type = "Secret Assignment"
        denylist = (_ASSIGNMENT,)

        def analyze_string(self, string: str) -> Any:
            for match in _ASSIGNMENT.finditer(string):
                quoted = match.group("quoted")
                value = quoted if quoted is not None else match.group("bare")
                if _secret_value(value, quoted is not None):
                    yield value

    def shaped(kind: str, pattern: str) -> Any:
        return type(kind.replace(" ", "") + "Detector", (RegexBasedDetector,),
                    {"secret_type": kind, "denylist": (re.compile(pattern),)})()

    found: list[Any] = [BearerTokenDetector(), BasicAuthHeaderDetector()]
    for module, name in DETECTORS:
        plugin = importlib.import_module(f"detect_secrets.plugins.{module}")
        found.append(getattr(plugin, name)())
    found += [shaped(kind, pattern) for kind, pattern in TOKEN_SHAPES]
    found.append(SecretAssignmentDetector())  # last: a known shape names the kind better
    return tuple(found)


def _kind_of(line: str, detectors: Sequence[Any]) -> str | None:
    """The kind of the first credential found in ``line`` or in a form hidden in it."""
    for form in variants(line):
        for part in form.splitlines() or [form]:
            for detector in detectors:
                if any(True for _ in detector.analyze_string(part)):
                    return str(detector.secret_type)
    return None


def find_credentials(fields: Iterable[tuple[str, str]]) -> list[Finding]:
    """Every credential-shaped string in ``(field name, text)`` pairs, at most one per line.

    Each line is checked as written, with invisible characters removed, and with its long
    base64 runs decoded (two levels deep), so a token split by a zero-width space or
    wrapped in base64 is the token.
    """
    detectors = _detectors()
    findings: list[Finding] = []
    for field, text in fields:
        for number, line in enumerate(text.splitlines(), 1):
            kind = _kind_of(line, detectors)
            if kind is not None:
                findings.append(Finding(field, number, kind))
    return findings


def summary(findings: Sequence[Finding], limit: int = 3) -> str:
    shown = "; ".join(f.describe() for f in findings[:limit])
    if len(findings) > limit:
        shown += f"; and {len(findings) - limit} more"
    return shown
