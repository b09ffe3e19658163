"""Shared pieces of the import tests."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from kgrag.cli.index_cmd import chat_totals
from tests.support.settings import fake_settings

DATA = Path(__file__).parent / "data"
LIGHTRAG_WD = DATA / "lightrag_wd"
LIGHTRAG_DOCS = DATA / "lightrag_docs"


# the shipped deterministic fakes; summaries from three fragments on
settings = partial(fake_settings, force_llm_summary_on_merge=3, max_gleaning=0)


def chat_calls(rag: Any) -> int:
    """Chat calls this instance made (cache hits are not calls)."""
    return int(chat_totals(rag.models.ledger.snapshot())["calls"])


def extraction_calls(rag: Any) -> int:
    """Extraction and gleaning calls this instance made."""
    snap = rag.models.ledger.snapshot()
    return sum(int(snap.get(role, {}).get("calls", 0)) for role in ("extract", "glean"))
