"""What the evaluation tests share: the sample's folder and the offline settings."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
# the settings scripts/eval_recall.py indexes with: NLP graph, hashing embedder, no chat model
OFFLINE = {
    "KGRAG_EXTRACTOR": "nlp",
    "KGRAG_LLM_PROVIDER": "none",
    "KGRAG_EMBEDDING_PROVIDER": "fake",
    "KGRAG_EMBEDDING_MODEL": "hash384",
    "KGRAG_LANGUAGE": "English",
}
