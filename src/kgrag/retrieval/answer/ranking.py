"""Which sentences of the context answer the question: lexical and dense, fused.

Every sentence gets a BM25 score over the question's terms, each weighted
by its idf among the context's sentences (a word every sentence has counts
for little, the word only the answer shares counts most); a question term
found only next to the sentence (the sentence before, the chunk's title)
counts a part. The idf is squared: within chunks already retrieved for the
question, its common words are every chunk's topic, and the rare one
("warn" in "What does Marley's ghost warn Scrooge about?") decides. The
best lexical candidates, a bounded number, are embedded and their cosine
with the question mixed in (see :mod:`kgrag.retrieval.answer.quotes`), both as
shares of the best; a sentence of few words or a question is marked down.

Sentences are then picked one at a time so that the quotes cover the
question between them (each hop of a two-hop question its own sentence):
once a quote holds a question term, that term's weight drops; the names
the quote brings that the question lacks (the bridge to the next hop) gain
some weight; a sentence repeating a picked one's words is marked down.
Deterministic: ties go to the earlier sentence in the context.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from kgrag.retrieval.answer.terms import names, terms

FULL_TERMS = 6  # a sentence of this many distinct terms can carry an answer
QUESTION_PRIOR = 0.6  # a sentence that asks rather than says


@dataclass(frozen=True, slots=True)
class RankOptions:
    """How many quotes, how many sentences to embed, and the weights of the mix.

    Chosen on HotpotQA's gold sentences (``scripts/eval_extractive.py``;
    with 100 questions, differences under 0.02 are noise); ``idf_power`` and
    ``dense_weight`` also so that the Christmas Carol warning test holds
    with the hashing embedder, at no cost on HotpotQA.
    """

    quotes: int = 4  # quotes at most
    dense: int = 12  # sentences embedded: the best lexical candidates
    dense_weight: float = 0.4  # share of the dense score in the mix (the rest lexical)
    covered: float = 0.3  # weight a question term keeps once a quote holds it
    bridge: float = 0.6  # weight of a name a quote brings that the question lacks
    redundancy: float = 0.2  # mark-down for sharing words with a picked sentence
    floor: float = 0.2  # a quote scoring under this share of the first is left out
    context: float = 0.4  # share of a term's idf when only the sentence's context holds it
    idf_power: float = 2.0  # rare question words decide: the common ones are every chunk's topic
    k1: float = 1.2
    b: float = 0.3  # weak length normalisation: a short sentence is no better for it


@dataclass(slots=True)
class Lexical:
    """BM25 over the sentences' term lists (idf counted among them).

    ``context`` holds, per sentence, the terms around it: a question term
    found only there counts ``context_weight`` of its idf, so "She resigned
    to become a lobbyist" still matches a question naming her.
    """

    docs: list[list[str]]
    context: list[set[str]] = field(default_factory=list)
    context_weight: float = 0.0
    k1: float = 1.2
    b: float = 0.75
    idf_power: float = 1.0
    postings: dict[str, list[tuple[int, int]]] = field(init=False)
    around: dict[str, list[int]] = field(init=False)
    norms: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.postings, self.around = {}, {}
        for i, doc in enumerate(self.docs):
            for term, tf in Counter(doc).items():
                self.postings.setdefault(term, []).append((i, tf))
        for i, near in enumerate(self.context):
            for term in near:
                self.around.setdefault(term, []).append(i)
        lengths = np.asarray([len(d) for d in self.docs], dtype=np.float64)
        mean = float(lengths.mean()) if len(lengths) else 1.0
        self.norms = self.k1 * (1 - self.b + self.b * lengths / max(mean, 1e-9))

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return float(math.log(1 + (len(self.docs) - df + 0.5) / (df + 0.5)) ** self.idf_power)

    def scores(self, weights: dict[str, float]) -> np.ndarray:
        """Each sentence's score, term ``t`` counting ``weights[t]`` times its idf."""
        out = np.zeros(len(self.docs), dtype=np.float64)
        for term, weight in weights.items():
            hits = self.postings.get(term, [])
            if weight <= 0 or not (hits or term in self.around):
                continue
            rows = np.fromiter((i for i, _ in hits), dtype=np.int64, count=len(hits))
            tf = np.fromiter((f for _, f in hits), dtype=np.float64, count=len(hits))
            idf = self.idf(term)
            out[rows] += weight * idf * tf * (self.k1 + 1) / (tf + self.norms[rows])
            near = self.around.get(term)
            if near and self.context_weight > 0:
                only = np.setdiff1d(np.asarray(near, dtype=np.int64), rows, assume_unique=True)
                out[only] += self.context_weight * weight * idf
        return out


def relative(values: np.ndarray) -> np.ndarray:
    """``values`` as shares of the largest, negatives as 0 (all 0 when none is positive)."""
    if not len(values):
        return values
    high = float(values.max())
    return np.clip(values, 0.0, None) / high if high > 0 else np.zeros_like(values)


def question_weights(question: str) -> dict[str, float]:
    """Each distinct question term, with weight 1."""
    return dict.fromkeys(terms(question), 1.0)


@dataclass(slots=True)
class Pool:
    """The sentences in play: texts, terms, which may be quoted, and their scores."""

    texts: list[str]
    docs: list[list[str]]
    eligible: np.ndarray  # bool: may be quoted (headings and markup may not)
    prior: np.ndarray  # how much a sentence can say: short ones and questions count less
    lexical: Lexical
    dense: np.ndarray = field(init=False)  # in [0, 1] among the embedded; 0 for the rest

    def __post_init__(self) -> None:
        self.dense = np.zeros(len(self.texts))

    @classmethod
    def of(
        cls,
        texts: list[str],
        docs: list[list[str]],
        eligible: list[bool],
        context: list[set[str]],
        o: RankOptions,
    ) -> Pool:
        """The pool of ``texts`` (their ``docs`` of terms); ``context``: each one's neighbours'."""
        prior = np.asarray([_prior(t, d) for t, d in zip(texts, docs, strict=True)])
        lexical = Lexical(docs, context, o.context, o.k1, o.b, o.idf_power)
        return cls(texts, docs, np.asarray(eligible, dtype=bool), prior, lexical)

    def dense_candidates(self, question: str, count: int) -> list[int]:
        """The ``count`` eligible sentences the question's terms rank best (context order)."""
        score = self.lexical.scores(question_weights(question)) * self.prior
        order = [i for i in np.argsort(-score, kind="stable") if self.eligible[i]]
        return sorted(int(i) for i in order[:count])


def _prior(text: str, doc: list[str]) -> float:
    """Under 1 for a sentence of few terms ("Scrooge replied.") or a question."""
    short = float(min(1.0, len(set(doc)) / FULL_TERMS) ** 0.5)
    return short * (QUESTION_PRIOR if text.rstrip("'\"”’) ").endswith(("?", "？")) else 1.0)


def _fused(lexical: np.ndarray, pool: Pool, penalty: np.ndarray, o: RankOptions) -> np.ndarray:
    capped = np.minimum(lexical, 1.5)  # a bridge-heavy sentence may pass the first best a little
    relevance = o.dense_weight * pool.dense + (1 - o.dense_weight) * capped
    fused: np.ndarray = relevance * pool.prior - o.redundancy * penalty
    return fused


def _reweight(weights: dict[str, float], held: set[str], bridge: set[str], o: RankOptions) -> None:
    """Lower the weight of the terms a quote holds; give its new names some."""
    for term in list(weights):
        if term in held:
            weights[term] *= o.covered
    for term in bridge:
        weights[term] = max(weights.get(term, 0.0), o.bridge)


def pick(question: str, pool: Pool, o: RankOptions) -> list[int]:
    """Indexes of the sentences to quote, best first (up to ``2 * o.quotes``: a pick
    next to an earlier one joins its quote)."""
    weights = question_weights(question)
    asked = set(weights)
    sets = [set(d) for d in pool.docs]
    first = pool.lexical.scores(weights)
    scale = float(first.max()) if len(first) and first.max() > 0 else 1.0
    penalty = np.zeros(len(pool.texts))
    open_ = pool.eligible.copy()
    picked: list[int] = []
    best = 0.0
    while len(picked) < 2 * o.quotes and open_.any():
        scores = np.where(
            open_, _fused(pool.lexical.scores(weights) / scale, pool, penalty, o), -np.inf
        )
        top = int(np.argmax(scores))  # the first of equal scores
        if picked and scores[top] < o.floor * best:
            break
        best = best if picked else float(scores[top])
        picked.append(top)
        open_[top] = False
        _reweight(weights, sets[top], names(pool.texts[top]) - asked, o)
        penalty = np.maximum(penalty, [_overlap(s, sets[top]) for s in sets])
    return picked


def _overlap(a: set[str], b: set[str]) -> float:
    """Share of the smaller term set found in the other."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
