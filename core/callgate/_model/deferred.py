"""`deferred`: a tool's code named by where it lives, imported on its first use.

A plugin registers its tools as declared data (name, description, schema, flags) and names
the code that runs them instead of importing it::

    SPEC = ToolSpec(name="word_count", description=..., schema=SCHEMA,
                    execute=deferred("callgate_word_count.tools.count:execute"))

A tool a factory builds (a shell tool for the program found at boot) binds its data:
``deferred("callgate_shell.tools.command:run_shell", "bash", executable)`` calls
``run_shell("bash", executable, ctx, args)``.

Registering then imports none of the tool's machinery: ``callgate tools``, a hook runner or
``callgate contract`` start without it (issue 38), and the module is imported by the first
call (or preview, or validation) that needs it. The registry checks at boot that the module
exists, so a misspelled reference still fails boot naming the plugin; a module that exists
but fails to import fails the first call, with the plugin and the error named.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable
from typing import Any

from .errors import ToolError

_LOCK = threading.Lock()


class DeferredImportError(Exception):
    """The module a `deferred` names could not be imported, or lacks the attribute."""


class Deferred:
    """A callable that imports ``module:attribute`` on its first call and then forwards to it.

    ``__module__`` is the named module, so what inspects a tool's code (the plugin layout
    test, `callgate plugins`) sees where it lives without importing it."""

    def __init__(self, ref: str, *args: Any, **kwargs: Any) -> None:
        module, sep, attribute = ref.partition(":")
        if not sep or not module or not attribute or not attribute.isidentifier():
            raise ValueError(f"deferred({ref!r}): name the code as 'package.module:attribute'")
        self.ref = ref
        self.module_name = module
        self.attribute = attribute
        self.__module__ = module
        self.__qualname__ = self.__name__ = attribute
        self.args = args
        self.kwargs = kwargs
        self._target: Callable[..., Any] | None = None

    def exists(self) -> bool:
        """Whether the module can be found (its parent packages are imported, not it)."""
        try:
            import importlib.util  # the module's finder: when asked, not at boot

            return importlib.util.find_spec(self.module_name) is not None
        except (ImportError, ValueError):
            return False

    def resolve(self) -> Callable[..., Any]:
        """The named callable, imported once (`DeferredImportError` saying why it cannot be)."""
        target = self._target
        if target is not None:
            return target
        with _LOCK:
            if self._target is None:
                try:
                    found = getattr(importlib.import_module(self.module_name), self.attribute)
                except Exception as exc:
                    raise DeferredImportError(
                        f"{self.ref} could not be loaded: {type(exc).__name__}: {exc}"
                    ) from exc
                if not callable(found):
                    raise DeferredImportError(f"{self.ref} is not callable")
                if self.args or self.kwargs:
                    found = functools.partial(found, *self.args, **self.kwargs)
                self._target = found
            return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        bound = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"deferred({', '.join([repr(self.ref), *bound])})"


def deferred(ref: str, *args: Any, **kwargs: Any) -> Deferred:
    """The callable ``"package.module:attribute"``, imported on its first call (module doc);
    ``args`` and ``kwargs``, if any, are bound before the caller's (`functools.partial`)."""
    return Deferred(ref, *args, **kwargs)


def resolved(function: Callable[..., Any], tool: str, plugin: str | None) -> Callable[..., Any]:
    """``function`` itself, or the callable a `Deferred` names, imported now; a tool whose
    code cannot be loaded is a `ToolError` naming the tool, its plugin and why."""
    if not isinstance(function, Deferred):
        return function
    try:
        return function.resolve()
    except DeferredImportError as exc:
        raise ToolError(
            "tool_error",
            f"{tool} (plugin {plugin}) cannot run: {exc}; the plugin is broken "
            "or half-installed, reinstall it or block it ([plugins] block)",
        ) from exc


__all__ = ["Deferred", "DeferredImportError", "deferred", "resolved"]
