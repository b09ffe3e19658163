"""Settings in sections: one table routes every flat name and variable to one section field."""

from __future__ import annotations

import ast
import types
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from kgrag.config.fields import FALLBACKS, FIELDS, PREFIX, SettingValue, env_names, flat_name
from kgrag.config.sections import SECTIONS, ChunkingSettings, PostgresSettings
from kgrag.config.settings import Settings
from kgrag.errors import SettingsError

GOLDEN = Path(__file__).parent / "golden"


def test_the_sections_are_the_settings_fields():
    assert list(Settings.model_fields) == list(SECTIONS)
    for name, info in Settings.model_fields.items():
        assert info.annotation is SECTIONS[name]
    assert not set(SECTIONS) & set(FIELDS)  # a section never shadows a flat name


def test_every_flat_name_is_one_section_field_and_back():
    places = list(FIELDS.values())
    assert len(set(places)) == len(places)
    declared = {(s, f) for s, model in SECTIONS.items() for f in model.model_fields}
    assert set(places) == declared
    for flat, place in FIELDS.items():
        assert flat_name(*place) == flat


def _value_types(annotation: object) -> list[object]:
    """The types a field annotation admits (a union's members, a literal's value types)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return [t for part in typing.get_args(annotation) for t in _value_types(part)]
    if origin is typing.Literal:
        return [type(value) for value in typing.get_args(annotation)]
    return [annotation]


def test_every_setting_holds_a_setting_value():
    allowed = set(typing.get_args(SettingValue))
    for section, model in SECTIONS.items():
        for name, info in model.model_fields.items():
            for kind in _value_types(info.annotation):
                assert kind in allowed, f"{section}.{name}: {kind}"
    settings = Settings()
    for flat in FIELDS:
        assert settings.value(flat) == getattr(
            getattr(settings, FIELDS[flat].section), FIELDS[flat].field
        )


def test_the_flat_names_are_those_kgrag_config_printed_before():
    printed = (GOLDEN / "defaults.txt").read_text().split("--- stdout\n")[1].splitlines()
    before = [line.split()[0] for line in printed if line and not line.startswith("---")]
    assert list(FIELDS) == before


def test_every_variable_sets_exactly_one_setting():
    owners: dict[str, list[str]] = {}
    for flat in FIELDS:
        for variable in env_names(flat):
            owners.setdefault(variable, []).append(flat)
    own = {v: flats for v, flats in owners.items() if v.startswith(PREFIX)}
    assert all(len(flats) == 1 for flats in own.values())
    assert len(own) == len(FIELDS)
    # the OpenAI SDK's variables are fallbacks for both the chat and the embedding endpoint
    shared = {v: flats for v, flats in owners.items() if not v.startswith(PREFIX)}
    assert shared == {
        "OPENAI_BASE_URL": ["llm_base_url", "embedding_base_url"],
        "OPENAI_API_KEY": ["llm_api_key", "embedding_api_key"],
    }
    assert set(FALLBACKS) <= set(FIELDS)


def test_a_variable_and_a_keyword_reach_their_section(monkeypatch, tmp_path):
    monkeypatch.setenv("KGRAG_CHUNK_SIZE", "500")
    monkeypatch.setenv("KGRAG_POSTGRES_POOL_MAX", "3")
    s = Settings(workdir=tmp_path, resolve="auto", _env_file=None)
    assert (s.chunking.size, s.postgres.pool_max, s.resolution.mode) == (500, 3, "auto")
    assert s.store.workdir == tmp_path
    assert {"chunk_size", "postgres_pool_max", "resolve", "workdir"} <= s.explicit()
    assert s.chunking.model_fields_set == {"size"}
    assert s.value("chunk_size") == 500


def test_a_section_validates_on_its_own():
    with pytest.raises(ValidationError):
        ChunkingSettings(size=5)
    with pytest.raises(ValidationError, match="chunk_overlap=300 must be smaller"):
        ChunkingSettings(size=100, overlap=300)
    with pytest.raises(ValidationError, match="postgres_pool_min=5 must not exceed"):
        PostgresSettings(pool_min=5, pool_max=2)
    with pytest.raises(SettingsError, match="chunk_size=5: must be at least 16"):
        Settings(chunk_size=5, _env_file=None)


def test_flat_reads_still_work_with_a_deprecation_warning():
    s = Settings(chunk_size=500, _env_file=None)
    with pytest.warns(DeprecationWarning, match=r"read settings\.chunking\.size"):
        assert s.chunk_size == 500
    with pytest.raises(AttributeError):
        s.no_such_setting  # noqa: B018


def test_overrides_keep_the_sections():
    s = Settings(top_k=3, _env_file=None).with_overrides(chunk_size=500)
    assert (s.query.top_k, s.chunking.size) == (3, 500)
    assert s.explicit() == {"top_k", "chunk_size"}


def test_config_imports_nothing_above_errors_and_types():
    import kgrag.config

    used = set()
    for path in Path(kgrag.config.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                used.add(node.module)
            elif isinstance(node, ast.Import):
                used.update(alias.name for alias in node.names)
    packages = {name.split(".")[1] for name in used if name.startswith("kgrag.")}
    assert packages <= {"config", "errors", "types"}
