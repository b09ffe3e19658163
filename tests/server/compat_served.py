"""A served index for the compatible-API tests: two workspaces, each with one document.

The default workspace holds :data:`DEFAULT_TEXT`, workspace ``alpha``
:data:`ALPHA_TEXT`; both are indexed (fake models) before the server
starts. Keys: :data:`KEY_ALL` opens every workspace, :data:`KEY_MAIN` only
the default one, :data:`KEY_ALPHA` only ``alpha``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kgrag.api.facade import KGRag
from tests.support.settings import fake_settings

from .served import Served, serving

KEY_ALL = "compat-key-every-workspace-0123456789"
KEY_MAIN = "compat-key-default-workspace-0123456"
KEY_ALPHA = "compat-key-workspace-alpha-012345678"
KEYS = {KEY_ALL: ["*"], KEY_MAIN: ["default"], KEY_ALPHA: ["alpha"]}
DEFAULT_TEXT = (
    "Ada Lovelace worked with Charles Babbage in London. Babbage designed the Analytical Engine."
)
ALPHA_TEXT = "Grace Hopper developed COBOL at Remington Rand. Hopper led the UNIVAC team."


async def _index(folder: Path, text: str) -> None:
    async with KGRag(fake_settings(folder)) as rag:
        await rag.insert(text)


@contextmanager
def compat_server(workdir: Path, keys: bool = True) -> Iterator[Served]:
    """The two indexed workspaces, served (with :data:`KEYS` unless ``keys`` is false)."""
    asyncio.run(_index(workdir, DEFAULT_TEXT))
    asyncio.run(_index(workdir / "workspaces" / "alpha", ALPHA_TEXT))
    with serving(workdir, "none", **({"api_keys": KEYS} if keys else {})) as served:
        yield served


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
