"""JavaScript and TypeScript symbols: classes and their methods, functions (declared, or a
single ``const``/``let``/``var`` holding a function), interfaces, type aliases and enums."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from ._syntax import Symbol, first_line, header, name_line, text

_CLASSES = {"class_declaration", "abstract_class_declaration"}
_FUNCTIONS = {"function_declaration", "generator_function_declaration", "function_signature"}
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function",
                    "generator_function"}
_METHODS = {"method_definition", "abstract_method_signature"}


def symbols(src: bytes, root: Node) -> Iterator[Symbol]:
    yield from _statements(src, root.children)


def _statements(src: bytes, children: list[Node]) -> Iterator[Symbol]:
    for child in children:
        node = child
        if child.type in ("export_statement", "ambient_declaration"):
            node = child.child_by_field_name("declaration") or next(
                (c for c in child.named_children if c.type not in ("decorator", "comment")),
                child)
        yield from _declaration(src, node, child)


def _declaration(src: bytes, node: Node, outer: Node) -> Iterator[Symbol]:
    name = node.child_by_field_name("name")
    if node.type in _CLASSES and name is not None:
        label = text(src, name)
        body = node.child_by_field_name("body")
        yield Symbol("class", label, None, name_line(name, node), header(src, node, body),
                     outer)
        for member in body.named_children if body is not None else []:
            if member.type in _METHODS:
                mname = member.child_by_field_name("name")
                yield Symbol("method", text(src, mname), label, name_line(mname, member),
                             header(src, member, member.child_by_field_name("body")), member)
    elif node.type in _FUNCTIONS and name is not None:
        yield Symbol("func", text(src, name), None, name_line(name, node),
                     header(src, node, node.child_by_field_name("body")), outer)
    elif node.type == "interface_declaration" and name is not None:
        yield Symbol("interface", text(src, name), None, name_line(name, node),
                     header(src, node, node.child_by_field_name("body")), outer)
    elif node.type == "type_alias_declaration" and name is not None:
        yield Symbol("type", text(src, name), None, name_line(name, node),
                     first_line(src, node), outer)
    elif node.type == "enum_declaration" and name is not None:
        yield Symbol("enum", text(src, name), None, name_line(name, node),
                     header(src, node, node.child_by_field_name("body")), outer)
    elif node.type in ("lexical_declaration", "variable_declaration"):
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(declarators) != 1:
            return
        target = declarators[0].child_by_field_name("name")
        value = declarators[0].child_by_field_name("value")
        if target is None or target.type != "identifier" or value is None or \
                value.type not in _FUNCTION_VALUES:
            return
        body = value.child_by_field_name("body")
        yield Symbol("func", text(src, target), None, name_line(target, node),
                     _until(src, node, body), outer)


def _until(src: bytes, declaration: Node, body: Node | None) -> str:
    return header(src, declaration, body)
