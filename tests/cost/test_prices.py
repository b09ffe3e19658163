"""The price table: a dict in Python, JSON in KGRAG_PRICES, each problem one line."""

from __future__ import annotations

import pytest

from kgrag.config.settings import Settings
from kgrag.errors import SettingsError
from tests.cli.clean_cli import FAKE, CleanCLI


def test_a_price_table_is_normalised(tmp_path, monkeypatch):
    s = Settings(workdir=tmp_path, prices={"gpt-4o-mini": [0.15, 0.6], "openai:e": {"prompt": 1}})
    assert s.cost.prices == {
        "gpt-4o-mini": {"prompt": 0.15, "completion": 0.6},
        "openai:e": {"prompt": 1.0, "completion": 0.0},
    }
    monkeypatch.setenv("KGRAG_PRICES", '{"m": {"prompt": 2, "completion": 8}}')
    assert Settings(workdir=tmp_path).cost.prices == {"m": {"prompt": 2.0, "completion": 8.0}}
    assert (
        Settings(workdir=tmp_path).with_overrides(chunk_size=500).cost.prices["m"]["prompt"] == 2.0
    )
    monkeypatch.delenv("KGRAG_PRICES")
    assert Settings(workdir=tmp_path).cost.prices == {}


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ('{"m": [1, 2}', "is not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"m": {"prompt": -1}}', "prompt price of 'm' must be a number >= 0"),
        ('{"m": {"prompt": "cheap"}}', "prompt price of 'm' must be a number >= 0"),
        ('{"m": {"completion": NaN}}', "completion price of 'm' must be a number >= 0"),
        ('{"m": {"prompt": 1, "output": 2}}', "has 'output'; only prompt and completion"),
        ('{"m": 3}', "the price of 'm' must be"),
    ],
)
def test_a_bad_price_table_is_one_line(tmp_path, monkeypatch, given, says):
    monkeypatch.setenv("KGRAG_PRICES", given)
    with pytest.raises(SettingsError) as caught:
        Settings(workdir=tmp_path)
    message = str(caught.value)
    assert says in message and "(from KGRAG_PRICES)" in message
    assert "\n" not in message and len(caught.value.problems) == 1


def test_a_bad_keyword_price_is_one_line(tmp_path):
    with pytest.raises(SettingsError, match=r"^prices=.*completion price of 'm'") as caught:
        Settings(workdir=tmp_path, prices={"m": {"completion": -0.5}})
    assert "\n" not in str(caught.value)


def test_the_command_refuses_a_bad_price_table(tmp_path, monkeypatch, capsys):
    cli = CleanCLI(monkeypatch, capsys, tmp_path)
    done = cli("cost", "--workdir", tmp_path / "idx", env={**FAKE, "KGRAG_PRICES": "{oops"})
    assert done.code == 2 and done.out == ""
    assert done.err.count("\n") == 1 and "KGRAG_PRICES" in done.err
