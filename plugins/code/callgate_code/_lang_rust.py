"""Rust symbols: functions, methods of ``impl`` and ``trait`` blocks, structs, enums, traits,
consts, type aliases and statics; items of an inline ``mod`` carry the module's name."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from ._syntax import Symbol, first_line, header, name_line, text

_FIRST_LINE = {"const_item": "const", "type_item": "type", "static_item": "var"}
_HEADED = {"struct_item": "struct", "enum_item": "enum", "union_item": "struct"}


def symbols(src: bytes, root: Node) -> Iterator[Symbol]:
    yield from _items(src, root.children, None)


def _items(src: bytes, children: list[Node], module: str | None) -> Iterator[Symbol]:
    for item in children:
        name = item.child_by_field_name("name")
        body = item.child_by_field_name("body")
        if item.type in ("function_item", "function_signature_item"):
            yield Symbol("func", text(src, name), module, name_line(name, item),
                         header(src, item, body), item)
        elif item.type in _HEADED and name is not None:
            yield Symbol(_HEADED[item.type], text(src, name), module, name_line(name, item),
                         header(src, item, body), item)
        elif item.type in _FIRST_LINE and name is not None:
            yield Symbol(_FIRST_LINE[item.type], text(src, name), module,
                         name_line(name, item), first_line(src, item), item)
        elif item.type == "trait_item" and name is not None:
            label = text(src, name)
            yield Symbol("trait", label, module, name_line(name, item), header(src, item, body),
                         item)
            yield from _methods(src, body, label)
        elif item.type == "impl_item":
            yield from _methods(src, body, impl_type(src, item))
        elif item.type == "mod_item" and body is not None:
            yield from _items(src, body.children, text(src, name))


def impl_type(src: bytes, impl: Node) -> str | None:
    """The base name of the implemented type (``P`` for ``impl<T> Tr for P<T>``)."""
    node = impl.child_by_field_name("type")
    while node is not None and node.type in ("generic_type", "reference_type",
                                             "scoped_type_identifier"):
        if node.type == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        elif node.type == "generic_type":
            node = node.child_by_field_name("type")
        else:
            node = node.child_by_field_name("type")
    return text(src, node) if node is not None else None


def _methods(src: bytes, body: Node | None, parent: str | None) -> Iterator[Symbol]:
    for member in body.named_children if body is not None else []:
        if member.type in ("function_item", "function_signature_item"):
            name = member.child_by_field_name("name")
            yield Symbol("method", text(src, name), parent, name_line(name, member),
                         header(src, member, member.child_by_field_name("body")), member)
