"""What is wrong with a set of settings, said in one line per problem.

:class:`kgrag.config.settings.Settings` is validated by pydantic; a pydantic
``ValidationError`` is a multi-line report written for developers. The
functions here turn it into short sentences for the people who typed the
value (``chunk_size=5: must be at least 16 (from KGRAG_CHUNK_SIZE)``), name
the closest valid setting for a typo, and find ``KGRAG_*`` variables that
look like a misspelt setting.

Environment variables: an unknown ``KGRAG_*`` variable (or ``.env`` entry)
whose name is close to a setting's (``KGRAG_CHUNK_SISE``) is an error, since
the user meant a setting and it would otherwise be ignored without a word.
Unknown names close to nothing are left alone: other tools may share the
prefix (the test support reads ``KGRAG_SYNTH_LLM``).
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Iterable, Mapping

from pydantic import ValidationError
from pydantic_core import ErrorDetails

PREFIX = "KGRAG_"
# KGRAG_ variables read by kgrag's own tools, not settings
NOT_SETTINGS = frozenset({"KGRAG_SYNTH_LLM"})
SECRET_FIELDS = frozenset(
    {"llm_api_key", "embedding_api_key", "rerank_api_key", "api_key", "api_keys", "jwt_secret"}
)
_CUTOFF = 0.6
_NUMBER = re.compile(r"[-+]?\d+(\.\d*)?")  # a variable's "5" is shown as 5, not '5'


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name ``name`` is most likely a typo of, if any is close."""
    found = difflib.get_close_matches(name.lower(), list(known), n=1, cutoff=_CUTOFF)
    return found[0] if found else None


def unknown_setting(name: str, known: Iterable[str]) -> str:
    """``unknown setting 'chunk_sise' (did you mean 'chunk_size'?)``."""
    guess = closest(name, known)
    hint = f" (did you mean {guess!r}?)" if guess else ""
    return f"unknown setting {name!r}{hint}"


def unknown_variables(
    names: Iterable[str], fields: Iterable[str], known_env: set[str]
) -> list[str]:
    """Problems for ``KGRAG_*`` names that are no setting but look like one."""
    problems = []
    fields = list(fields)
    for name in sorted(names):
        upper = name.upper()
        if not upper.startswith(PREFIX) or upper in known_env or upper in NOT_SETTINGS:
            continue
        guess = closest(upper[len(PREFIX) :], fields)
        if guess:
            problems.append(
                f"unknown variable {name} (did you mean {PREFIX}{guess.upper()}, "
                f"setting {guess!r}?)"
            )
    return problems


def mask(field: str, value: object) -> object:
    """``value`` with a secret shown only by its last four characters."""
    if field not in SECRET_FIELDS or not value:
        return value
    if isinstance(value, dict):  # api_keys: the keys are the secrets
        return {mask(field, str(key)): spaces for key, spaces in value.items()}
    text = str(value)
    return f"…{text[-4:]}" if len(text) > 8 else "***"


def describe(
    exc: ValidationError, field_of: Mapping[str, str], env_names: Mapping[str, list[str]]
) -> list[str]:
    """One sentence per error of ``exc``.

    ``field_of`` maps every alias (``KGRAG_LLM_BASE_URL``) to its field;
    ``env_names`` maps a field to the variables that set it, so a value
    that came from the environment names its variable.
    """
    return [_sentence(error, field_of, env_names) for error in exc.errors()]


def _sentence(
    error: ErrorDetails, field_of: Mapping[str, str], env_names: Mapping[str, list[str]]
) -> str:
    loc = [str(part) for part in error.get("loc", ())]
    message = _what_is_allowed(error)
    if not loc:  # a check across fields (model validator)
        return message
    field = field_of.get(loc[0], loc[0])
    where = ".".join([field, *loc[1:]])
    value = mask(field, error.get("input"))
    shown = value if isinstance(value, str) and _NUMBER.fullmatch(value) else repr(value)
    variable = first_set(env_names.get(field, []))
    source = f" (from {variable})" if variable else ""
    return f"{where}={shown}: {message}{source}"


def _what_is_allowed(error: ErrorDetails) -> str:
    kind, ctx = error.get("type", ""), error.get("ctx") or {}
    bounds = {
        "greater_than_equal": ("at least", "ge"),
        "greater_than": ("greater than", "gt"),
        "less_than_equal": ("at most", "le"),
        "less_than": ("less than", "lt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"must be {words} {ctx.get(key)}"
    message = str(error.get("msg", "invalid value"))
    message = message.removeprefix("Value error, ")
    return message[:1].lower() + message[1:]


def first_set(variables: Iterable[str]) -> str | None:
    """The first of ``variables`` set in the environment, if any."""
    return next((name for name in variables if name in os.environ), None)


# -- the price table (Settings.prices, KGRAG_PRICES) ---------------------------

PRICE_FORMAT = 'a JSON object {"model": {"prompt": USD, "completion": USD}} per million tokens'
_PRICE_SIDES = ("prompt", "completion")


def prices(value: object) -> dict[str, dict[str, float]]:
    """The price table, each model's entry as ``{"prompt": x, "completion": y}``.

    ``value`` is a dict, or its JSON text (``KGRAG_PRICES``); an entry may be
    a ``[prompt, completion]`` pair or a dict (a side left out costs 0).
    Raises ValueError saying, in one line, what is wrong.
    """
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"is not JSON ({exc.msg}); expected {PRICE_FORMAT}") from None
    if not isinstance(value, dict):
        raise ValueError(f"expected {PRICE_FORMAT}, got {type(value).__name__}")
    return {str(model): _price(str(model), entry) for model, entry in value.items()}


def _price(model: str, entry: object) -> dict[str, float]:
    if isinstance(entry, list | tuple) and len(entry) == 2:
        entry = dict(zip(_PRICE_SIDES, entry, strict=True))
    if not isinstance(entry, dict):
        raise ValueError(f"the price of {model!r} must be {{'prompt': x, 'completion': y}}")
    extra = sorted(set(map(str, entry)) - set(_PRICE_SIDES))
    if extra:
        raise ValueError(f"the price of {model!r} has {extra[0]!r}; only prompt and completion")
    out = {}
    for side in _PRICE_SIDES:
        number = entry.get(side, 0.0)
        if (
            isinstance(number, bool)
            or not isinstance(number, int | float)
            or not 0 <= number < math.inf
        ):
            raise ValueError(
                f"the {side} price of {model!r} must be a number >= 0 (USD per million "
                f"tokens), got {number!r}"
            )
        out[side] = float(number)
    return out
