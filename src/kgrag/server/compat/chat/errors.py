"""Refusals of chat requests, each with its HTTP status (the library's own errors are
mapped by :func:`kgrag.server.routes.errors.status_of`)."""

from __future__ import annotations

from kgrag.errors import KGRagError


class ChatError(KGRagError):
    """A chat request refused, with the HTTP status that says why."""

    status = 400

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = self.status if status is None else status


class UnknownModelError(ChatError):
    """A model name that names no workspace and mode of this server."""

    status = 404


class TurnError(ChatError):
    """A chat request that holds no question to answer."""
