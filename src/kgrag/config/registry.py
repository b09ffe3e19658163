"""A small registry of named, lazily imported implementations.

Backends and providers register a dotted path ("package.module:Name"), not
a class, so choosing one backend never imports the others (or their
optional dependencies). Asking for an unknown name raises
:class:`~kgrag.errors.UnknownBackendError` listing the known ones.
"""

from __future__ import annotations

import importlib
from typing import Generic, TypeVar, cast

from kgrag.errors import ConfigError, UnknownBackendError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to lazily imported factories."""

    def __init__(self, kind: str):
        self.kind = kind
        self._paths: dict[str, str] = {}
        self._objects: dict[str, T] = {}

    def register(self, name: str, target: str | T) -> None:
        """Register ``target``: a ``"module:attr"`` path or the object itself."""
        if isinstance(target, str):
            self._paths[name] = target
        else:
            self._objects[name] = target

    def names(self) -> list[str]:
        return sorted({*self._paths, *self._objects})

    def __contains__(self, name: str) -> bool:
        return name in self._paths or name in self._objects

    def get(self, name: str) -> T:
        """Return the registered object, importing it on first use."""
        if name in self._objects:
            return self._objects[name]
        if name not in self._paths:
            raise UnknownBackendError(self.kind, name, self.names())
        module_name, _, attr = self._paths[name].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ConfigError(
                f"{self.kind} {name!r} needs a package that is not installed: {exc}"
            ) from exc
        obj = cast("T", getattr(module, attr))  # the path names a T (trusted, as registered)
        self._objects[name] = obj
        return obj
