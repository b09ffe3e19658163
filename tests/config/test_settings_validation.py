"""Settings are validated on the way in, from keywords, overrides, the environment and .env.

Every problem is a ConfigError (SettingsError) with one sentence per
problem: the field, the value, what is allowed; a typo names the closest
valid setting.
"""

from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from kgrag import KGRag
from kgrag.config.settings import Settings, setting_source
from kgrag.errors import ConfigError, SettingsError


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No KGRAG_/OPENAI_ variable of the caller's, no .env of the caller's."""
    for name in list(os.environ):
        if name.startswith(("KGRAG_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def problems(**values) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        Settings(**values)
    assert isinstance(caught.value, ConfigError)
    assert "\n" not in str(caught.value)  # one line, whatever the number of problems
    return caught.value.problems


def test_a_misspelt_keyword_names_the_closest_setting():
    assert problems(chunk_sise=500) == ["unknown setting 'chunk_sise' (did you mean 'chunk_size'?)"]
    assert problems(zzzz_qqqq=1) == ["unknown setting 'zzzz_qqqq'"]


def test_the_facade_validates_its_overrides():
    with pytest.raises(ConfigError, match="did you mean 'chunk_size'"):
        KGRag(chunk_sise=500)
    with pytest.raises(ConfigError, match=r"llm_max_async=0: must be at least 1"):
        KGRag(llm_max_async=0)
    with pytest.raises(
        ConfigError, match="chunk_overlap=5000 must be smaller than chunk_size=1200"
    ):
        KGRag(chunk_overlap=5000)


def test_out_of_range_values_say_what_is_allowed():
    assert problems(top_k=0) == ["top_k=0: must be at least 1"]
    assert problems(cosine_threshold=1.5) == ["cosine_threshold=1.5: must be at most 1.0"]
    found = problems(chunk_top_k=0, max_total_tokens=0)
    assert found == ["chunk_top_k=0: must be at least 1", "max_total_tokens=0: must be at least 1"]
    assert problems(chunker="tokens") == [
        "chunker='tokens': input should be 'token' or 'recursive'"
    ]


def test_conflicting_values_are_one_problem_naming_both():
    assert problems(chunk_size=100, chunk_overlap=100) == [
        "chunk_overlap=100 must be smaller than chunk_size=100"
    ]
    assert problems(split_by_character_only=True) == [
        "split_by_character_only needs split_by_character"
    ]


def test_the_pydantic_error_stays_the_cause():
    with pytest.raises(SettingsError) as caught:
        Settings(top_k=0)
    assert isinstance(caught.value.__cause__, ValidationError)


def test_overrides_are_validated_and_keep_what_was_set():
    base = Settings(language="German")
    copy = base.with_overrides(chunk_size=500)
    assert (copy.chunking.size, copy.extraction.language) == (500, "German")
    assert copy.explicit() == {"language", "chunk_size"}  # not every field: the rest is default
    assert base.with_overrides() is base
    with pytest.raises(
        SettingsError, match="chunk_overlap=600 must be smaller than chunk_size=500"
    ):
        copy.with_overrides(chunk_overlap=600)
    with pytest.raises(SettingsError, match="did you mean 'top_k'"):
        copy.with_overrides(top_kk=3)


def test_overrides_do_not_read_the_environment_again(monkeypatch):
    base = Settings()
    monkeypatch.setenv("KGRAG_TOP_K", "7")
    assert base.with_overrides(chunk_size=500).query.top_k == 40


def test_a_bad_environment_value_names_its_variable(monkeypatch):
    monkeypatch.setenv("KGRAG_CHUNK_SIZE", "5")
    assert problems() == ["chunk_size=5: must be at least 16 (from KGRAG_CHUNK_SIZE)"]
    monkeypatch.setenv("KGRAG_CHUNK_SIZE", "big")
    assert problems()[0].startswith("chunk_size='big': input should be a valid integer")


def test_a_misspelt_variable_is_an_error_naming_the_setting(monkeypatch):
    monkeypatch.setenv("KGRAG_CHUNK_SISE", "500")
    assert problems() == [
        "unknown variable KGRAG_CHUNK_SISE (did you mean KGRAG_CHUNK_SIZE, setting 'chunk_size'?)"
    ]


def test_variables_of_other_tools_are_left_alone(monkeypatch):
    monkeypatch.setenv("KGRAG_SYNTH_LLM", "/somewhere/synth_llm.py")  # the test support's
    monkeypatch.setenv("KGRAG_XYZZY", "1")  # close to no setting
    assert Settings().chunking.size == 1200


def test_dotenv_typos_are_found_and_other_entries_ignored(tmp_path):
    (tmp_path / ".env").write_text("KGRAG_TOP_KK=3\nSOMETHING_ELSE=1\n")
    assert problems() == [
        "unknown variable KGRAG_TOP_KK (did you mean KGRAG_TOP_K, setting 'top_k'?)"
    ]
    (tmp_path / ".env").write_text("KGRAG_TOP_K=3\nSOMETHING_ELSE=1\n")
    settings = Settings()
    assert settings.query.top_k == 3
    assert setting_source(settings, "top_k") == ".env (KGRAG_TOP_K)"


def test_sources_of_settings(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-1234567890")
    settings = Settings(chunk_size=500)
    assert setting_source(settings, "llm_api_key") == "environment (OPENAI_API_KEY)"
    assert setting_source(settings, "chunk_size") == "keyword"
    assert setting_source(settings, "top_k") == "default"


def test_the_language_is_one_kgrag_knows(monkeypatch):
    [problem] = problems(language="Klingon")
    assert problem.startswith("language='Klingon': not a language kgrag knows; known: Afrikaans")
    assert "German" in problem and "Chinese" in problem and "ISO 639-1" in problem
    monkeypatch.setenv("KGRAG_LANGUAGE", "Klingon")
    assert problems()[0].endswith("(from KGRAG_LANGUAGE)")
    monkeypatch.delenv("KGRAG_LANGUAGE")
    # Named by English name, code or own name, in any case: stored by its English name.
    for given in ("German", "german", "de", "Deutsch", " GERMAN "):
        assert Settings(language=given).extraction.language == "German"
    assert Settings(language="zh").extraction.language == "Chinese"
    assert Settings(language="Simplified Chinese").extraction.language == "Simplified Chinese"
    assert Settings().extraction.language == "English"
