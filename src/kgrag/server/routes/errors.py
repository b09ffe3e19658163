"""kgrag's errors as HTTP answers, in one place.

Every :class:`~kgrag.errors.KGRagError` a route lets through becomes
``{"detail": message, "error": class name}`` with the status of the first
matching class in :data:`STATUSES` (most specific first); anything else of
kgrag's is a 500. Model errors that carry ``retry_after`` pass it on as a
``Retry-After`` header.

The message is :func:`client_message`: a model's failure says what
happened, never its endpoint's address; a file is named by its name,
never by its path on the server. The server's log keeps the details.
"""

from __future__ import annotations

import logging
from pathlib import PurePath

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from kgrag import errors as e
from kgrag.llm.failures import public_reason
from kgrag.server.access.redact import client_text
from kgrag.server.workspaces.pool import WorkspaceError

log = logging.getLogger(__name__)

STATUSES: tuple[tuple[type[e.KGRagError], int], ...] = (
    (WorkspaceError, 400),
    (e.DocumentNotFoundError, 404),
    (e.EntityNotFoundError, 404),
    (e.MergeNotFoundError, 404),
    (e.NoIndexError, 404),
    (e.CurationError, 409),
    (e.WorkdirBusyError, 503),
    (e.StorageError, 500),
    (e.ConfigError, 400),
    (e.QueryError, 400),
    (e.LoaderError, 422),
    (e.ModelTimeoutError, 504),
    (e.ModelRateLimitError, 503),
    (e.ModelError, 502),
    (e.ExtractionError, 502),
    (e.NotOpenError, 503),
)


def status_of(exc: e.KGRagError) -> int:
    """The HTTP status for ``exc``: its own (a refused chat request carries one), else by kind."""
    own = getattr(exc, "status", None)
    if isinstance(own, int):
        return own
    return next((code for kind, code in STATUSES if isinstance(exc, kind)), 500)


def client_message(exc: e.KGRagError) -> str:
    """``exc`` in words a client may read: no endpoint address, URL or server path.

    Every answer that carries an error's text uses it (an error status, an
    error event or line of a stream); a model's failure is logged whole.
    """
    if isinstance(exc, e.ModelError):
        log.warning("a model failed: %s", exc)
        return public_reason(exc)
    if isinstance(exc, e.LoaderError):
        return f"{PurePath(exc.path).name}: {client_text(exc.reason)}"
    return client_text(str(exc)) or type(exc).__name__


def error_response(exc: e.KGRagError) -> JSONResponse:
    """``exc`` as the JSON answer a client gets."""
    headers = {}
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        headers["Retry-After"] = str(max(1, round(retry_after)))
    body = {"detail": client_message(exc), "error": type(exc).__name__}
    return JSONResponse(body, status_code=status_of(exc), headers=headers)


async def _handle(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, e.KGRagError)
    return error_response(exc)


def install(app: FastAPI) -> None:
    """Register the handler on ``app`` (``create_app`` calls it)."""
    app.add_exception_handler(e.KGRagError, _handle)
