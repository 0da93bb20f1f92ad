"""Go symbols: functions, methods (parent = receiver base type), type specs, consts and vars."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from ._syntax import Symbol, first_line, header, name_line, text


def symbols(src: bytes, root: Node) -> Iterator[Symbol]:
    for child in root.children:
        if child.type == "function_declaration":
            name = child.child_by_field_name("name")
            yield Symbol("func", text(src, name), None, name_line(name, child),
                         header(src, child, child.child_by_field_name("body")), child)
        elif child.type == "method_declaration":
            name = child.child_by_field_name("name")
            yield Symbol("method", text(src, name), receiver_type(src, child),
                         name_line(name, child),
                         header(src, child, child.child_by_field_name("body")), child)
        elif child.type == "type_declaration":
            yield from _types(src, child)
        elif child.type in ("const_declaration", "var_declaration"):
            yield from _values(src, child)


def receiver_type(src: bytes, method: Node) -> str | None:
    """The receiver's base type name: no ``*``, no type arguments."""
    receiver = method.child_by_field_name("receiver")
    if receiver is None:
        return None
    for param in receiver.named_children:
        if param.type != "parameter_declaration":
            continue
        node = param.child_by_field_name("type")
        while node is not None and node.type in ("pointer_type", "generic_type",
                                                 "parenthesized_type"):
            if node.type == "generic_type":
                node = node.child_by_field_name("type")
            else:
                inner = [c for c in node.named_children]
                node = inner[0] if inner else None
        return text(src, node) if node is not None else None
    return None


def specs(declaration: Node, kinds: tuple[str, ...]) -> list[Node]:
    """The specs of a declaration, whether grouped in ``( ... )`` or alone."""
    found = []
    for child in declaration.named_children:
        if child.type in kinds:
            found.append(child)
        elif child.type.endswith("_spec_list"):
            found.extend(c for c in child.named_children if c.type in kinds)
    return found


def _types(src: bytes, declaration: Node) -> Iterator[Symbol]:
    group = specs(declaration, ("type_spec", "type_alias"))
    lone = len(group) == 1
    for spec in group:
        name = spec.child_by_field_name("name")
        target = declaration if lone else spec
        underlying = spec.child_by_field_name("type")
        kind, body = "type", None
        if spec.type == "type_spec" and underlying is not None:
            if underlying.type == "struct_type":
                kind = "struct"
                body = next((c for c in underlying.children
                             if c.type == "field_declaration_list"), None)
            elif underlying.type == "interface_type":
                kind = "interface"
                body = next((c for c in underlying.children if c.type == "{"), None)
        signature = header(src, spec, body, "type ") if kind != "type" else \
            first_line(src, target)
        yield Symbol(kind, text(src, name), None, name_line(name, spec), signature, target)


def _values(src: bytes, declaration: Node) -> Iterator[Symbol]:
    kind = "const" if declaration.type == "const_declaration" else "var"
    group = specs(declaration, ("const_spec", "var_spec"))
    lone = len(group) == 1
    for spec in group:
        names = spec.children_by_field_name("name")
        labels = [text(src, n) for n in names]
        target = declaration if lone else spec
        for node, label in zip(names, labels, strict=True):
            others = tuple(other for other in labels if other != label)
            yield Symbol(kind, label, None, name_line(node, spec), first_line(src, target),
                         target, others)
