"""The thresholds that govern merging, as one small parameter object.

:class:`MergePolicy` is built once from :class:`~kgrag.config.settings.Settings`
and handed to the pure merge functions and to the summariser. It also
carries the tokenizer used to count description tokens, so every caller
counts the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kgrag.llm.tokenizer import Tokenizer, get_tokenizer

if TYPE_CHECKING:
    from kgrag.config.settings import Settings

LimitMethod = Literal["KEEP", "FIFO"]


@dataclass(frozen=True, slots=True)
class MergePolicy:
    """Merge thresholds (defaults match :class:`~kgrag.config.settings.Settings`).

    - ``force_llm_summary_on_merge``: summarise once a node/edge has this
      many description fragments;
    - ``summary_max_tokens``: ...or once the fragments add up to this many
      tokens;
    - ``summary_context_size``: most tokens one summary call may carry
      (larger inputs are summarised map-reduce);
    - ``summary_length_recommended``: target summary length in tokens;
    - ``max_source_ids_per_entity`` / ``_per_relation``: caps on
      ``source_ids``; ``source_ids_limit_method`` KEEP keeps the oldest ids
      (and skips fragments from further sources), FIFO keeps the newest;
    - ``max_file_paths``: cap on ``file_paths`` (same KEEP/FIFO rule).
    """

    force_llm_summary_on_merge: int = 8
    summary_max_tokens: int = 1200
    summary_context_size: int = 12000
    summary_length_recommended: int = 600
    max_source_ids_per_entity: int = 200
    max_source_ids_per_relation: int = 200
    source_ids_limit_method: LimitMethod = "KEEP"
    max_file_paths: int = 75
    tokenizer: Tokenizer = field(default_factory=get_tokenizer, compare=False, repr=False)

    @classmethod
    def from_settings(cls, s: Settings, tokenizer: Tokenizer | None = None) -> MergePolicy:
        """The policy of ``s``; the tokenizer defaults to ``s.tokenizer``."""
        return cls(
            force_llm_summary_on_merge=s.merging.force_llm_summary_on_merge,
            summary_max_tokens=s.merging.summary_max_tokens,
            summary_context_size=s.merging.summary_context_size,
            summary_length_recommended=s.merging.summary_length_recommended,
            max_source_ids_per_entity=s.merging.max_source_ids_per_entity,
            max_source_ids_per_relation=s.merging.max_source_ids_per_relation,
            source_ids_limit_method=s.merging.source_ids_limit_method,
            max_file_paths=s.merging.max_file_paths,
            tokenizer=tokenizer or get_tokenizer(s.chunking.tokenizer),
        )

    @property
    def keep(self) -> bool:
        """True when the limit method is KEEP (oldest ids win)."""
        return self.source_ids_limit_method == "KEEP"

    def count_tokens(self, texts: list[str]) -> int:
        """Sum of the token counts of ``texts``."""
        return sum(self.tokenizer.count(t) for t in texts)

    def summary_needed(self, fragments: list[str]) -> bool:
        """Whether ``fragments`` (deduplicated) must be summarised by the LLM.

        One fragment never is; more are once their number reaches
        ``force_llm_summary_on_merge`` or their tokens ``summary_max_tokens``.
        """
        if len(fragments) <= 1:
            return False
        if len(fragments) >= self.force_llm_summary_on_merge:
            return True
        return self.count_tokens(fragments) >= self.summary_max_tokens
