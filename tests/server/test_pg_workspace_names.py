"""Named workspaces as PostgreSQL workspaces: one each, and read back from the schema's name."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kgrag.config.settings import Settings
from kgrag.server.workspaces import postgres as pg
from kgrag.server.workspaces.pool import DEFAULT, WorkspaceError, Workspaces

NAMES = ["docs", "team-a", "team_a", "Team-A", "team__a", "team_0a", "a-_-b", "X", "x", "0-"]


def test_every_name_has_its_own_workspace_and_reads_back() -> None:
    codes = {pg.encode(name) for name in NAMES}
    assert len(codes) == len(NAMES)  # - and _ and case never collide
    for name in NAMES:
        code = pg.encode(name)
        assert set(code) <= set("abcdefghijklmnopqrstuvwxyz0123456789_")
        assert pg.decode(code) == name
        schema = pg.SCHEMA_PREFIX + pg.workspace_of("base", name)
        assert pg.name_of("base", schema) == name
    assert pg.encode("docs") == "docs" and pg.encode("team-a") == "team_0a"


def test_all_short_names_are_told_apart() -> None:
    alphabet = "aA0-_"
    names = ["".join(p) for n in (1, 2, 3) for p in itertools.product(alphabet, repeat=n)]
    assert len({pg.encode(n) for n in names}) == len(names)


def test_schemas_that_no_name_makes_are_not_workspaces() -> None:
    assert pg.name_of("base", "kgrag_base") is None  # the default workspace itself
    assert pg.name_of("base", "kgrag_other__docs") is None
    for code in ("_1x", "doc_", "_", "a_b_"):
        assert pg.decode(code) is None


def test_named_workspaces_get_their_own_postgres_workspace(tmp_path: Path) -> None:
    settings = Settings(
        workdir=tmp_path / "w", storage="postgres", postgres_dsn="postgresql:///x", _env_file=None
    )
    spaces = Workspaces(settings)
    assert spaces.settings_for(DEFAULT).postgres.workspace is None  # the workdir's name: w
    assert spaces.settings_for("team-a").postgres.workspace == "w__team_0a"
    assert spaces.settings_for("team-a").store.workdir == tmp_path / "w" / "workspaces" / "team-a"
    based = Workspaces(settings.with_overrides(postgres_workspace="prod"))
    assert based.settings_for("Team_A").postgres.workspace == "prod___team___a"
    with pytest.raises(WorkspaceError, match="too long"):
        spaces.settings_for("x" * 60)
