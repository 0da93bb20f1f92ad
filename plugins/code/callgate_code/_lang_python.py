"""Python symbols: module-level functions, classes and their methods, single-name assignments.

Definitions inside function bodies are never indexed. Blocks of ``if``,
``try`` and ``with`` statements at module or class level are looked into,
since what they define is still a module or class attribute.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from ._syntax import Symbol, first_line, header, name_line, text

_COMPOUND = {"if_statement", "try_statement", "with_statement"}
_CLAUSES = {"block", "elif_clause", "else_clause", "except_clause", "finally_clause",
            "except_group_clause"}


def symbols(src: bytes, root: Node) -> Iterator[Symbol]:
    yield from _block(src, root.children, None)


def _block(src: bytes, children: list[Node], cls: str | None) -> Iterator[Symbol]:
    for child in children:
        node = child
        if child.type == "decorated_definition":
            node = child.child_by_field_name("definition") or child
        if node.type == "function_definition":
            name = node.child_by_field_name("name")
            kind = "method" if cls else "func"
            yield Symbol(kind, text(src, name), cls, name_line(name, node),
                         header(src, node, node.child_by_field_name("body")), child)
        elif node.type == "class_definition":
            name = node.child_by_field_name("name")
            label = text(src, name)
            body = node.child_by_field_name("body")
            yield Symbol("class", label, cls, name_line(name, node), header(src, node, body),
                         child)
            if body is not None:
                yield from _block(src, body.children, label)
        elif child.type == "expression_statement":
            target = _single_name(child)
            if target is not None:
                yield Symbol("var", text(src, target), cls, name_line(target, child),
                             first_line(src, child), child)
        elif child.type in _COMPOUND:
            for part in child.children:
                if part.type in _CLAUSES:
                    inner = part.children if part.type == "block" else \
                        [b for c in part.children if c.type == "block" for b in c.children]
                    yield from _block(src, inner, cls)


def _single_name(statement: Node) -> Node | None:
    """The identifier of ``x = ...`` or ``x: T [= ...]`` (one plain name, not chained)."""
    named = [c for c in statement.named_children if c.type != "comment"]
    if len(named) != 1 or named[0].type != "assignment":
        return None
    assignment = named[0]
    left = assignment.child_by_field_name("left")
    right = assignment.child_by_field_name("right")
    if left is None or left.type != "identifier":
        return None
    if right is not None and right.type == "assignment":
        return None
    return left
