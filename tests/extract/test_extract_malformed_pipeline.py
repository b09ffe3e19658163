"""Malformed glean replies through the whole pipeline: never in the graph or the cache.

The project's fake chat model answers extraction as usual; its glean
replies are what the fake server's ``--garbage-rate`` produced when kgrag
cached a relation with empty keywords and an entity "Kelzandor Province"
of type UNKNOWN: every line a field short. The document is warned.
"""

from __future__ import annotations

from kgrag import KGRag
from kgrag.extract.parser import parse_extraction
from kgrag.llm.base import ChatRequest, ChatResult
from kgrag.llm.fake import FakeChatProvider
from tests.support.settings import fake_settings

TEXT = "Ebenezer Scrooge kept a counting-house in London. Jacob Marley was his partner."
GOOD_GLEAN = "\n".join(
    [
        "entity<|#|>Kelzandor Province<|#|>Location<|#|>A province where Scrooge trades.",
        "entity<|#|>Fezziwig<|#|>Person<|#|>Scrooge's old master.",
        "relation<|#|>Kelzandor Province<|#|>Ebenezer Scrooge<|#|>collaboration<|#|>They trade.",
        "relation<|#|>Fezziwig<|#|>Ebenezer Scrooge<|#|>participation<|#|>He trained Scrooge.",
        "<|COMPLETE|>",
    ]
)


def field_short(reply: str) -> str:
    """Every record a field short, as the fake server garbles a reply."""
    return "\n".join(line.rsplit("<|#|>", 1)[0] for line in reply.splitlines())


class GarblingGleans(FakeChatProvider):
    """The fake model; its glean replies garbled, re-asks too unless ``recovers``."""

    def __init__(self, recovers: bool):
        super().__init__()
        self.recovers = recovers

    async def chat(self, request: ChatRequest) -> ChatResult:
        if request.role != "glean":
            return await super().chat(request)
        reask = "could not be used" in str(request.messages[-1]["content"])
        text = GOOD_GLEAN if reask and self.recovers else field_short(GOOD_GLEAN)
        return ChatResult(text=text, prompt_tokens=10, completion_tokens=10, finish_reason="stop")


async def _index(tmp_path, recovers: bool):
    settings = fake_settings(tmp_path, entity_types=["Person", "Location", "Organization"])
    async with KGRag(settings, chat=GarblingGleans(recovers)) as rag:
        report = await rag.insert([TEXT])
        graph = rag.storage.graph
        names = await graph.all_node_names()
        nodes = await graph.get_nodes(names)
        edges = await graph.get_edges([(a, b) for a, b, _ in await graph.all_edges()])
        kv = rag.storage.kv("llm_cache")
        cached = [await kv.get(key) for key in await kv.keys()]
        status = await rag.status()
    return report, nodes, edges, cached, status


def _cached_replies(cached: list, role: str) -> list[str]:
    return [row["text"] for row in cached if row and row["role"] == role]


async def test_a_glean_that_stays_malformed_reaches_neither_graph_nor_cache(tmp_path):
    report, nodes, edges, cached, status = await _index(tmp_path, recovers=False)
    assert len(report.processed) == 1 and not report.failed
    assert "Ebenezer Scrooge" in nodes  # the extract reply was good
    assert "Kelzandor Province" not in nodes and "Fezziwig" not in nodes
    assert all(node["entity_type"] != "UNKNOWN" for node in nodes.values())
    assert edges and all(edge["keywords"].strip() for edge in edges.values())
    assert _cached_replies(cached, "glean") == []  # never cached as healthy
    assert all(parse_extraction(t).rejected == 0 for t in _cached_replies(cached, "extract"))
    (warned,) = status["warnings"]
    assert any("glean 1: reply malformed in 4 attempts" in w for w in warned["warnings"])


async def test_a_malformed_glean_recovered_on_a_reask_is_cached_only_when_good(tmp_path):
    report, nodes, edges, cached, status = await _index(tmp_path, recovers=True)
    assert len(report.processed) == 1 and not report.failed
    assert nodes["Kelzandor Province"]["entity_type"] == "Location"
    assert nodes["Fezziwig"]["entity_type"] == "Person"
    assert all(edge["keywords"].strip() for edge in edges.values())
    assert _cached_replies(cached, "glean") == [GOOD_GLEAN]
    (warned,) = status["warnings"]
    assert any("recovered on re-ask 1" in w for w in warned["warnings"])
