"""Model names of the chat-compatible APIs: ``kgrag[/WORKSPACE][:MODE]``.

``kgrag`` is the request's workspace (the default one, or the one named by
the ``/w/NAME`` path prefix or the ``X-Workspace`` header) answering in
mode ``mix``; ``/WORKSPACE`` picks a named workspace and ``:MODE`` a query
mode. Ollama's tag ``latest`` is the default mode. A message prefix
(``/local ...``) overrides the model's mode. Examples: ``kgrag``,
``kgrag:ppr``, ``kgrag/manuals``, ``kgrag/manuals:naive``, ``kgrag:latest``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgrag.server.compat.chat.errors import UnknownModelError
from kgrag.server.workspaces.pool import DEFAULT, WorkspaceError, check_name

BASE = "kgrag"
DEFAULT_MODE = "mix"
LATEST = "latest"
# The modes a model name or a message prefix may choose; the default first.
MODES = ("mix", "local", "global", "hybrid", "naive", "ppr", "path", "auto", "bypass")


@dataclass(frozen=True, slots=True)
class ModelName:
    """What a model name chooses; None: left to the request (workspace) or the message (mode)."""

    workspace: str | None = None
    mode: str | None = None


def parse_model(name: str) -> ModelName:
    """The workspace and mode ``name`` chooses; :class:`UnknownModelError` when it is no model."""
    base, _, tag = name.strip().partition(":")
    head, slash, space = base.partition("/")
    if head != BASE or (slash and not space):
        raise UnknownModelError(f"model {name!r} not found: models are kgrag[/WORKSPACE][:MODE]")
    if tag and tag != LATEST and tag not in MODES:
        raise UnknownModelError(f"model {name!r}: unknown mode {tag!r}; modes: {', '.join(MODES)}")
    try:
        workspace = check_name(space) if slash else None
    except WorkspaceError as exc:
        raise UnknownModelError(f"model {name!r}: {exc}") from exc
    return ModelName(workspace, tag if tag and tag != LATEST else None)


def model_name(workspace: str | None, mode: str | None = None) -> str:
    """The name of the model serving ``workspace`` (None or default: ``kgrag``) in ``mode``."""
    base = BASE if workspace in (None, DEFAULT) else f"{BASE}/{workspace}"
    return f"{base}:{mode}" if mode else base
