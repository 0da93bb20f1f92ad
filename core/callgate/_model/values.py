"""The values that flow through the pipeline: calls, results, violations, decisions.

They are plain attrs classes so that plugins, the CLI and tests can build and
compare them without touching a host. The CLI's replay serialiser
(`callgate_cli._serial`) turns them into the JSON shapes the replay CLI prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs

#: The closed list of error kinds (host.md §7). Plugins map their failures onto it.
ERROR_KINDS = frozenset(
    {
        "unknown_tool",
        "invalid_arguments",
        "invalid_transcript",
        "blocked",
        "unavailable",
        "not_observed",
        "stale_version",
        "outside_workspace",
        "not_found",
        "already_exists",
        "timeout",
        "cancelled",
        "config_error",
        "tool_error",
    }
)


@attrs.frozen
class TextBlock:
    """A piece of text the model reads."""

    text: str
    type: Literal["text"] = "text"


@attrs.frozen
class ImageBlock:
    """An image the model sees; `data` holds the file's exact bytes (adapters base64 them)."""

    media_type: str
    data: bytes = attrs.field(repr=lambda b: f"<{len(b)} bytes>")
    type: Literal["image"] = "image"


Block = TextBlock | ImageBlock


@attrs.frozen
class ErrorInfo:
    """Why a call failed: a kind from `ERROR_KINDS`, a stable signature and the message."""

    kind: str = attrs.field(validator=attrs.validators.in_(ERROR_KINDS))
    signature: str
    message: str


@attrs.frozen
class ToolCall:
    """One call: its id, the tool's name and the arguments.

    What the model sent has ``arguments`` untouched (a dict, or the JSON text
    OpenAI sends). The pipeline hands its hooks the *effective* call: the
    decoded arguments and, when the model's call runs another tool (a proxy's
    target, an alias's primary), that tool's name and arguments, with the
    call as sent in ``via``.
    """

    id: str
    name: str
    arguments: Any = None
    via: ToolCall | None = attrs.field(default=None, repr=False)


@attrs.define
class ToolResult:
    """The outcome of one call, provider-neutral.

    `content` is what the model sees; `meta` carries machine-readable facts
    (exit codes, job ids, signatures) that integrators may use.
    """

    content: list[Block] = attrs.field(factory=list)
    is_error: bool = False
    error: ErrorInfo | None = None
    meta: dict[str, Any] = attrs.field(factory=dict)
    call_id: str | None = None
    name: str | None = None

    @property
    def text(self) -> str:
        """All text blocks joined by a newline."""
        content = self.content
        if len(content) == 1 and type(content[0]) is TextBlock:  # most results: one block
            return content[0].text
        return "\n".join(b.text for b in content if isinstance(b, TextBlock))

    @property
    def images(self) -> list[ImageBlock]:
        return [b for b in self.content if isinstance(b, ImageBlock)]

    @classmethod
    def ok(cls, text: str, meta: Mapping[str, Any] | None = None) -> ToolResult:
        """A successful text result."""
        return cls(content=[TextBlock(text)], meta=dict(meta) if meta else {})

    @classmethod
    def failure(
        cls,
        kind: str,
        message: str,
        signature: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolResult:
        """An error result whose text is `message`."""
        return cls(
            content=[TextBlock(message)],
            is_error=True,
            error=ErrorInfo(kind, signature or default_signature(kind, message), message),
            meta=dict(meta or {}),
        )

    def with_text(self, text: str) -> ToolResult:
        """The same result with its text blocks replaced by one block (images kept after it)."""
        return attrs.evolve(self, content=[TextBlock(text), *self.images])


def default_signature(kind: str, message: str) -> str:
    """host.md §7: a kind's fallback signature when the plugin has no code of its own."""
    if kind in {"timeout", "cancelled", "not_found"}:
        return kind
    first = message.splitlines()[0] if message else kind
    return first[:120]


@attrs.frozen
class Violation:
    """One reason the arguments are invalid: where (JSON pointer), which rule, what was expected."""

    path: str
    keyword: str
    expected: str


@attrs.frozen
class Decision:
    """A permission verdict and the rule that made it (`None` for a hook without rules).

    ``source`` names who decided: ``"permissions"`` for the ``[permissions]`` rules, else
    the deciding plugin (the host fills in its name when a hook leaves it out).
    """

    action: Literal["allow", "ask", "deny"]
    rule: str | None = None
    reason: str | None = None
    source: str | None = None


@attrs.frozen
class Refuse:
    """Returned by a pre-tool-use hook to block a call; `reason` reaches the model.

    ``source`` names who refused (the result's signature is ``hook:<source>``);
    the host fills in the plugin's name when it is left out.
    """

    reason: str
    source: str | None = None


@attrs.frozen
class Replace:
    """Returned by a pre-tool-use hook to run the call with other arguments (validated again).

    ``source`` is filled in with the plugin's name when it is left out.
    """

    arguments: Any
    source: str | None = None


@attrs.frozen
class PathRole:
    """How a structured mutation uses one of its path arguments (for the host gate).

    - ``modify``: the file must exist and carry a live observation.
    - ``create_or_modify``: a missing file may be created; an existing one is a modify.
    - ``create``: a new name; only confinement, the lease and the removed-after-read check apply.

    ``recovery`` is what the gate advises when the path is a directory or not a regular
    file (default: list it / use the shell).
    """

    argument: str
    mode: Literal["modify", "create_or_modify", "create"] = "modify"
    follow_symlinks: bool = True
    recovery: str | None = None


@attrs.frozen
class PermissionSubject:
    """Which arguments a `Tool(spec)` rule matches, and how (host.md §6).

    ``forms(value)``, for the ``pattern`` and ``url`` kinds, returns what rules see
    instead of the raw value: the canonical form first (an allow rule must match
    it), then more readings that a deny or ask rule is also tried on (any match
    fires). web_fetch's normalises URLs, so ``https://host./%73ecret`` cannot slip
    past a rule written for ``https://host/secret``. Empty: the raw value only.
    ``kind`` is built in (``path``, ``pattern``, ``url``) or supplied by a plugin
    (`callgate.permissions.SubjectKind`: the shell's ``command``). ``dialect`` is the
    language a supplied kind parses its values in: for ``command``, ``"posix"`` (sh and
    bash) or ``"pwsh"``.
    """

    kind: str
    arguments: tuple[str, ...]
    forms: Callable[[str], Sequence[str]] | None = attrs.field(default=None, eq=False)
    dialect: str = "posix"
