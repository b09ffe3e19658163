"""The cost report against the fake OpenAI-compatible server: every figure is what it counted."""

from __future__ import annotations

from typing import Any

from kgrag.api.facade import KGRag
from kgrag.maintenance.cost_report import CostFigures
from tests.support.settings import http_settings
from tests.synth import run_synth, synth_reset, synth_stats

from .corpus import CHANGED, write_corpus

CHAT, EMBED = "openai:gpt-4o-mini", "openai:text-embedding-3-small"


def served(stats: dict[str, Any]) -> tuple[int, int, int]:
    """(calls, prompt tokens, completion tokens) the server answered, chat and embeddings."""
    calls = stats["chat_calls"] + stats["embedding_requests"]
    prompt = stats["prompt_tokens"] + stats["embedding_tokens"]
    return calls, prompt, stats["completion_tokens"]


def counted(f: CostFigures) -> tuple[int, int, int]:
    return f.calls, f.prompt_tokens, f.completion_tokens


async def _steps(rag: KGRag, base_url: str, tmp_path: Any) -> dict[str, Any]:
    """Index, supersede, query and delete; the server's counters of each step."""
    paths = write_corpus(tmp_path / "docs")
    seen: dict[str, Any] = {}
    synth_reset(base_url)
    await rag.index_paths(list(paths.values()))
    seen["index"] = synth_stats(base_url)
    paths["ada.txt"].write_text(CHANGED, encoding="utf-8")
    synth_reset(base_url)
    await rag.index_paths([paths["ada.txt"]])
    seen["supersede"] = synth_stats(base_url)
    synth_reset(base_url)
    seen["result"] = await rag.query("Who designed the Bombe at Bletchley Park?", mode="local")
    seen["query:local"] = synth_stats(base_url)
    synth_reset(base_url)
    await rag.delete(paths=[str(paths["turing.txt"])])
    seen["delete"] = synth_stats(base_url)
    return seen


async def test_each_operation_is_what_the_server_counted(tmp_path):
    with run_synth() as base_url:
        async with KGRag(http_settings(tmp_path / "idx", base_url)) as rag:
            seen = await _steps(rag, base_url, tmp_path)
            report = await rag.cost_report()
    operations = ("index", "supersede", "query:local", "delete")
    for name in operations:
        assert counted(report.operations.get(name, CostFigures())) == served(seen[name]), name
    assert served(seen["index"])[0] > 0 and served(seen["supersede"])[0] > 0
    assert served(seen["query:local"])[0] > 0 and served(seen["delete"])[0] > 0
    assert set(report.operations) <= set(operations)
    assert counted(report.parts["initial index"]) == served(seen["index"])
    updates = [served(seen["supersede"]), served(seen["delete"])]
    assert counted(report.parts["updates"]) == tuple(map(sum, zip(*updates, strict=True)))
    assert counted(report.parts["queries"]) == served(seen["query:local"])
    everything = [served(seen[name]) for name in operations]
    assert counted(report.total) == tuple(map(sum, zip(*everything, strict=True)))
    assert report.earlier is None


async def test_models_and_the_query_cost_match_the_server(tmp_path):
    with run_synth() as base_url:
        async with KGRag(http_settings(tmp_path / "idx", base_url)) as rag:
            seen = await _steps(rag, base_url, tmp_path)
            report = await rag.cost_report()
    steps = [seen[n] for n in ("index", "supersede", "query:local", "delete")]
    chat, embed = report.models[CHAT], report.models[EMBED]
    assert chat.calls == sum(s["chat_calls"] for s in steps)
    assert chat.prompt_tokens == sum(s["prompt_tokens"] for s in steps)
    assert chat.completion_tokens == sum(s["completion_tokens"] for s in steps)
    assert embed.calls == sum(s["embedding_requests"] for s in steps)
    assert embed.prompt_tokens == sum(s["embedding_tokens"] for s in steps)
    cost = seen["result"].cost
    assert (cost.calls, cost.prompt_tokens, cost.completion_tokens) == served(seen["query:local"])
    assert cost.usd is None  # no price table


async def test_documents_carry_their_own_calls(tmp_path):
    with run_synth() as base_url:
        async with KGRag(http_settings(tmp_path / "idx", base_url)) as rag:
            seen = await _steps(rag, base_url, tmp_path)
            report = await rag.cost_report()
    paths = {d.file_path for d in report.documents}
    assert any(p and p.endswith("ada.txt") for p in paths)
    assert None in paths  # turing.txt was deleted: its costs stay, its record is gone
    per_document = sum(d.cost.calls for d in report.documents)
    index_side = report.operations["index"].calls + report.operations["supersede"].calls
    assert 0 < per_document <= index_side
    ranked = [d.cost.tokens for d in report.documents]
    assert ranked == sorted(ranked, reverse=True)
    assert served(seen["index"])[0] > 0
