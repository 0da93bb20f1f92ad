"""Bearer tokens for ``callgate serve --http``: where they come from and how one is checked.

Tokens come from ``--token-file FILE`` (one per line; blank lines and ``#`` comments
ignored) and from the environment variable ``CALLGATE_SERVE_TOKENS`` (separated by
whitespace or commas). A request is checked by the MCP SDK's resource-server auth
(``BearerAuthBackend`` + ``RequireAuthMiddleware``) with `StaticTokenVerifier`: a
token is compared in constant time with every known one, and its principal is
``token-<first 12 hex digits of its sha256>``, so a session opened with one token
is refused to every other token (the session's owner), and no token is ever logged.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterable

from mcp.server.auth.provider import AccessToken

TOKENS_ENV = "CALLGATE_SERVE_TOKENS"

#: The shortest token accepted: shorter ones are guessable.
MIN_TOKEN_CHARS = 16


class TokenError(ValueError):
    """A token file cannot be read or holds a token that is too short."""


def principal_of(token: str) -> str:
    """The name a token's sessions are owned by (never the token itself)."""
    return "token-" + hashlib.sha256(token.encode()).hexdigest()[:12]


def load_tokens(token_file: str | None, environ: dict[str, str] | None = None) -> list[str]:
    """Every token from ``token_file`` and ``$CALLGATE_SERVE_TOKENS`` (`TokenError` if bad)."""
    env = os.environ if environ is None else environ
    tokens: list[str] = [t for t in re.split(r"[\s,]+", env.get(TOKENS_ENV, "")) if t]
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenError(f"token file {token_file}: {exc}") from exc
        tokens += [s for s in (line.strip() for line in lines) if s and not s.startswith("#")]
    short = [principal_of(t) for t in tokens if len(t) < MIN_TOKEN_CHARS]
    if short:
        raise TokenError(
            f"bearer tokens must have at least {MIN_TOKEN_CHARS} characters "
            f"({len(short)} shorter: {', '.join(short)})"
        )
    return list(dict.fromkeys(tokens))


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` over a fixed set of tokens."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self._tokens = [t.encode() for t in tokens]

    async def verify_token(self, token: str) -> AccessToken | None:
        given = token.encode()
        found = False
        for known in self._tokens:  # no early exit: the time taken names no token
            found |= hmac.compare_digest(given, known)
        if not found:
            return None
        return AccessToken(token=token, client_id=principal_of(token), scopes=[])


__all__ = [
    "MIN_TOKEN_CHARS",
    "TOKENS_ENV",
    "StaticTokenVerifier",
    "TokenError",
    "load_tokens",
    "principal_of",
]
