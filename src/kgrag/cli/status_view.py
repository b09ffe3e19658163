"""What ``kgrag status`` prints, and the *built with* line ``kgrag index`` shares with it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kgrag.cli.index_summary import BuiltWith
from kgrag.ingest.names import display_name


def print_status(status: Mapping[str, Any], as_json: bool) -> int:
    """The index's status (:func:`kgrag.maintenance.status.index_status`) on stdout."""
    if as_json:
        print(json.dumps(status))
        return 0
    g = status["graph"]
    print(f"workdir: {status['workdir']}")
    for name, info in status["documents"].items():
        print(f"  {name:<10} {info['count']}")
    for f in status["failed"]:
        print(display_name(f"    failed {f['file_path']} ({f['id']}): {f['error']}"))
    for w in status.get("warnings", []):
        print(
            display_name(
                f"    warnings {w['file_path']} ({w['id']}): {len(w['warnings'])}; "
                f"first: {w['warnings'][0]}"
            )
        )
    if status.get("disabled"):
        print(f"  disabled   {len(status['disabled'])}")
    print(
        f"graph: {g['documents']} documents, {g['chunks']} chunks, "
        f"{g['entities']} entities, {g['relations']} relations; "
        f"built by: {', '.join(g['built_by']) or 'nothing yet'}"
    )
    print(f"embedding: {status['embedding']}")
    _print_queue(status.get("storage") or {})
    _print_tail(status)
    return 0


def _print_tail(status: Mapping[str, Any]) -> None:
    """The remembered settings, refused inputs, pending summaries and all-time model costs."""
    if status.get("settings"):
        print(describe_built_with(built_with(status["settings"])))
    for path, reason in (status.get("rejected_inputs") or {}).items():
        print(display_name(f"    rejected {path}: {reason}"))
    if status.get("summaries_pending"):
        print(
            f"summaries pending: {status['summaries_pending']} (an interrupted run; "
            "`kgrag retry` finishes them)"
        )
    ledger: Mapping[str, Mapping[str, float]] = status.get("llm_all_time") or {}
    for role, row in sorted(ledger.items()):
        print(
            f"  {role:<9} calls {row.get('calls', 0):>6}  prompt {row.get('prompt_tokens', 0):>9}"
            f"  completion {row.get('completion_tokens', 0):>8}  {call_time(row)}"
        )


def _print_queue(storage: Mapping[str, Any]) -> None:
    queue = storage.get("queue")
    if queue:
        print(
            f"storage: {storage['backend']} workspace {storage.get('workspace')}; queue: "
            f"{queue['pending']} pending, {queue['leased']} leased by workers, "
            f"{queue['expired']} with an expired lease"
        )


def call_time(row: Mapping[str, float]) -> str:
    """``18.0 s wall, 111.0 s summed over 40 calls`` (parallel calls overlap), else the sum."""
    summed = row.get("seconds", 0)
    if "wall_s" not in row:
        return f"{summed:.1f} s in calls"
    return f"{row['wall_s']:.1f} s wall, {summed:.1f} s summed over {row.get('calls', 0)} calls"


def built_with(remembered: dict[str, Any] | None) -> BuiltWith:
    """What the index was built with, for the summary: language (and how chosen), embedder."""
    if not remembered:
        return {}
    from kgrag.indexing.manifest import describe_embedder

    return {
        "language": remembered.get("language"),
        "language_source": remembered.get("language_source"),
        "embedder": describe_embedder(remembered),
        "extractor": remembered.get("extractor"),
        "chunk_size": remembered.get("chunk_size"),
    }


def describe_built_with(info: BuiltWith) -> str:
    """``language: Chinese (detected); embedder: local e5-small; extractor: nlp``."""
    source = f" ({info['language_source']})" if info.get("language_source") else ""
    parts = [f"language: {info.get('language') or '?'}{source}", f"embedder: {info['embedder']}"]
    if info.get("extractor"):
        parts.append(f"extractor: {info['extractor']}")
    if info.get("chunk_size"):
        parts.append(f"chunks: {info['chunk_size']} tokens")
    return "; ".join(parts)
