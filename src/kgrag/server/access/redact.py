"""Text a client may read: no model endpoint's address, no absolute path of the server.

Errors written for operators (a failed document's stored error, a job's
error) name model endpoints (``openai:gpt-4o@10.0.0.5:8080``) and files by
their server path. What the server sends shows them without:

- :func:`client_text` hides URLs and ``host:port`` addresses
  (:func:`kgrag.llm.failures.scrub_addresses`) and shortens an absolute
  path whose folder exists on this machine to its file name (a route such
  as ``/documents/upload`` names no folder here, and stays);
- :func:`scrubbed` applies it to every string of a JSON-ready value.

Documents are named by :func:`kgrag.ingest.names.document_name`.
"""

from __future__ import annotations

import os
import re
from typing import Any

from kgrag.llm.failures import scrub_addresses

# An absolute POSIX path: a slash not following a word, a dot or another slash.
_PATH = re.compile(r"(?<![\w.:/])/[^\s'\"<>:;,()\[\]{}]+")


def _shortened(match: re.Match[str]) -> str:
    path = match.group(0).rstrip(".")
    tail = match.group(0)[len(path) :]
    folder = os.path.dirname(path)
    if folder in ("", "/") or not os.path.isdir(folder):
        return match.group(0)
    return (os.path.basename(path) or path) + tail


def client_text(text: str) -> str:
    """``text`` without endpoint addresses, URLs, or absolute paths of this machine."""
    return _PATH.sub(_shortened, scrub_addresses(text))


def scrubbed(value: Any) -> Any:
    """``value`` (dicts, lists, strings) with :func:`client_text` applied to every string."""
    if isinstance(value, str):
        return client_text(value)
    if isinstance(value, dict):
        return {k: scrubbed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrubbed(v) for v in value]
    return value
