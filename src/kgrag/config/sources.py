"""Reading the flat settings: keywords, ``KGRAG_*`` variables and ``.env``, validated once.

:class:`~kgrag.config.settings.Settings` is composed of section models;
the values arrive flat (``chunk_size=...``, ``KGRAG_CHUNK_SIZE``). This
module builds one flat pydantic-settings model from the sections' fields
and the table in :mod:`kgrag.config.fields` (the section field's type,
bounds and description, under its flat name and variables), reads and
validates the values with it, and groups them back into sections. The
environment is read here and nowhere else.
"""

from __future__ import annotations

import contextvars
import copy
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any, cast

from pydantic import AliasChoices, BaseModel, ValidationError, create_model, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.sources import DotenvType

from kgrag.config import check as config_check
from kgrag.config import fields
from kgrag.config.sections import SECTIONS
from kgrag.errors import SettingsError

ENV_FILE = ".env"
# sections whose values are checked together, in the order their problems are reported
_CHECKED = ("chunking", "postgres")

# False while Settings.with_overrides builds its copy: only the given values count.
_READ_SOURCES: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "kgrag_settings_read_sources", default=True
)


@contextmanager
def values_only() -> Iterator[None]:
    """Within: settings are built from the given values alone (no variables, no ``.env``)."""
    token = _READ_SOURCES.set(False)
    try:
        yield
    finally:
        _READ_SOURCES.reset(token)


class _Flat(BaseSettings):
    """The base of the flat model: where values come from, and the checks across fields."""

    model_config = SettingsConfigDict(
        env_prefix=fields.PREFIX, env_file=ENV_FILE, extra="ignore", populate_by_name=True
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keyword values, then ``KGRAG_*`` variables, then ``.env`` (copies: values only)."""
        if not _READ_SOURCES.get():
            return (init_settings,)
        return (init_settings, env_settings, dotenv_settings, file_secret_settings)

    @model_validator(mode="after")
    def _consistent(self) -> _Flat:
        built = grouped(self, frozenset())
        for name in _CHECKED:
            built[name].check()  # type: ignore[attr-defined]
        return self


@cache
def _flat_model() -> type[_Flat]:
    """The flat model: one field per flat name, typed and bounded like its section's field."""
    definitions: dict[str, Any] = {}
    for flat, place in fields.FIELDS.items():
        info = copy.copy(SECTIONS[place.section].model_fields[place.field])
        if flat in fields.FALLBACKS:
            info.validation_alias = AliasChoices(*fields.env_names(flat))
        definitions[flat] = (info.annotation, info)
    return create_model("Settings", __base__=_Flat, **definitions)


def read(values: Mapping[str, object]) -> tuple[BaseModel, frozenset[str]]:
    """The validated flat values and the names that were given one; raises SettingsError."""
    known = set(field_of())
    problems = [
        config_check.unknown_setting(k, fields.FIELDS)
        for k in values
        if not k.startswith("_") and k not in known
    ]
    if _READ_SOURCES.get():
        # pydantic-settings' own keyword: a path, several, or None
        problems += _variable_typos(cast("DotenvType | None", values.get("_env_file", ENV_FILE)))
    if problems:
        raise SettingsError(problems)
    # the flat model's fields are made at run time: it takes any keyword, validated by pydantic
    build: Callable[..., _Flat] = _flat_model()
    try:
        flat = build(**values)
    except ValidationError as exc:
        raise SettingsError(config_check.describe(exc, field_of(), env_names())) from exc
    return flat, frozenset(flat.model_fields_set)


def grouped(flat: BaseModel, explicit: frozenset[str]) -> dict[str, BaseModel]:
    """The section models holding ``flat``'s values (already validated: not checked again)."""
    values: dict[str, dict[str, Any]] = {name: {} for name in SECTIONS}
    given: dict[str, set[str]] = {name: set() for name in SECTIONS}
    for name, place in fields.FIELDS.items():
        values[place.section][place.field] = getattr(flat, name)
        if name in explicit:
            given[place.section].add(place.field)
    return {
        name: model.model_construct(_fields_set=given[name], **values[name])
        for name, model in SECTIONS.items()
    }


@cache
def field_of() -> dict[str, str]:
    """Every name that sets a setting (its flat name and its variables) mapped to the flat name."""
    out: dict[str, str] = {}
    for flat in fields.FIELDS:
        out[flat] = flat
        if flat in fields.FALLBACKS:
            out.update({variable: flat for variable in fields.env_names(flat)})
    return out


@cache
def env_names() -> dict[str, list[str]]:
    """The environment variables that set each setting (flat name), in the order they are tried."""
    return {flat: fields.env_names(flat) for flat in fields.FIELDS}


def _variable_typos(env_file: DotenvType | None) -> list[str]:
    """Problems for ``KGRAG_*`` names in the environment or ``.env`` that look misspelt."""
    known = {n for names in env_names().values() for n in names}
    names = set(os.environ) | set(dotenv_entries(env_file))
    return config_check.unknown_variables(names, fields.FIELDS, known)


def dotenv_entries(env_file: DotenvType | None) -> dict[str, str | None]:
    """The entries of the ``.env`` file the settings read (none when it is absent)."""
    from dotenv import dotenv_values

    if not env_file:
        return {}
    files = [env_file] if isinstance(env_file, str | os.PathLike) else list(env_file)
    out: dict[str, str | None] = {}
    for path in files:
        if os.path.isfile(path):
            out.update(dotenv_values(path))
    return out
