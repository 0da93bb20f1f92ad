"""Java symbols: classes and records, interfaces, enums, and their methods and constructors
(parent = the enclosing type); nested types carry their enclosing type as parent."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from ._syntax import Symbol, header, name_line, text

_TYPES = {"class_declaration": "class", "record_declaration": "class",
          "interface_declaration": "interface", "enum_declaration": "enum"}
_METHODS = {"method_declaration", "constructor_declaration", "compact_constructor_declaration"}


def symbols(src: bytes, root: Node) -> Iterator[Symbol]:
    yield from _members(src, root.children, None)


def _members(src: bytes, children: list[Node], parent: str | None) -> Iterator[Symbol]:
    for member in children:
        name = member.child_by_field_name("name")
        body = member.child_by_field_name("body")
        if member.type in _TYPES and name is not None:
            label = text(src, name)
            yield Symbol(_TYPES[member.type], label, parent, name_line(name, member),
                         header(src, member, body), member)
            if body is not None:
                inner = list(body.children)
                for part in body.children:
                    if part.type == "enum_body_declarations":
                        inner.extend(part.children)
                yield from _members(src, inner, label)
        elif member.type in _METHODS and name is not None and parent is not None:
            yield Symbol("method", text(src, name), parent, name_line(name, member),
                         header(src, member, body), member)
