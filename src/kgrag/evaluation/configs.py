"""A configuration to compare: ``KEY=VALUE`` pairs split into query parameters and settings.

Keys that are :class:`~kgrag.retrieval.param.QueryParam` fields (``mode``,
``top_k``, ``chunk_top_k``, ``response_type``...) shape each query; other
keys are :class:`~kgrag.config.settings.Settings` fields (``llm_model``,
``llm_temperature``...) the index is opened with. Values are read as JSON
when they parse (``20``, ``0.5``, ``true``), else as text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields

from kgrag.errors import ConfigError


@dataclass(frozen=True, slots=True)
class RunConfig:
    """How one side of a comparison answers: its label, settings and query parameters."""

    label: str
    settings: dict[str, object] = field(default_factory=dict)
    param: dict[str, object] = field(default_factory=dict)


def _value(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def run_config(pairs: dict[str, str]) -> RunConfig:
    """The configuration the ``pairs`` describe; an unknown key is a :class:`ConfigError`."""
    from kgrag.config.fields import FIELDS
    from kgrag.retrieval.param import QueryParam

    query_fields = {f.name for f in fields(QueryParam)} - {"stream"}
    settings: dict[str, object] = {}
    param: dict[str, object] = {}
    for key, text in pairs.items():
        if key in query_fields:
            param[key] = _value(text)
        elif key in FIELDS and key != "workdir":
            settings[key] = _value(text)
        else:
            raise ConfigError(f"{key!r} is neither a query parameter nor a setting")
    label = ",".join(f"{k}={v}" for k, v in pairs.items()) or "defaults"
    return RunConfig(label, settings, param)
