"""Query side: keywords, graph and chunk retrieval, budgeted context, answers.

Public API::

    QueryEngine(storage, chat, embed, rerank, tokenizer, settings)
        .query(question, param) -> QueryResult
        .stream(question, param) -> AnswerStream (async iterator of text pieces)
        .query_data(question, param, trace=False) -> dict
    QueryParam, QueryResult, render_trace(trace) -> str, where_lost(trace, item_id) -> str
    register_mode(name, retrieve, vectors=..., keywords=...)
"""

from kgrag.retrieval.answer.stream import AnswerStream
from kgrag.retrieval.engine import QueryEngine
from kgrag.retrieval.modes.registry import get_mode, mode_names, register_mode
from kgrag.retrieval.param import QueryParam, QueryResult
from kgrag.retrieval.trace import render_trace, where_lost

__all__ = [
    "AnswerStream",
    "QueryEngine",
    "QueryParam",
    "QueryResult",
    "get_mode",
    "mode_names",
    "register_mode",
    "render_trace",
    "where_lost",
]
