"""PostgreSQL settings: validated in Settings, and carried to the store (pool, SSL, index)."""

from __future__ import annotations

import pytest

from kgrag.config.settings import Settings
from kgrag.errors import SettingsError
from kgrag.storage.registry import storage_for

DSN = "postgresql://kg:secret@db.example:5432/kg?sslmode=prefer"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"postgres_pool_min": 5, "postgres_pool_max": 2}, "postgres_pool_min=5 must not exceed"),
        ({"postgres_hnsw_m": 32, "postgres_hnsw_ef_construction": 40}, "at least 2 x"),
        ({"postgres_sslmode": "sometimes"}, "postgres_sslmode"),
        ({"postgres_hnsw_m": 1}, "postgres_hnsw_m"),
        ({"postgres_hnsw_ef_search": 1001}, "postgres_hnsw_ef_search"),
        ({"postgres_reconnect_s": 0}, "postgres_reconnect_s"),
        ({"postgres_index_rows": 0}, "postgres_index_rows"),
    ],
)
def test_postgres_settings_are_validated_in_one_line(values, message):
    with pytest.raises(SettingsError, match=message) as caught:
        Settings(**values)
    assert "\n" not in str(caught.value)


def test_postgres_settings_reach_the_store(tmp_path):
    from psycopg.conninfo import conninfo_to_dict

    from kgrag.storage.postgres.vector_index import IndexOptions

    settings = Settings(
        workdir=tmp_path,
        storage="postgres",
        postgres_dsn=DSN,
        postgres_pool_min=2,
        postgres_pool_max=3,
        postgres_reconnect_s=5,
        postgres_sslmode="verify-full",
        postgres_sslrootcert="/etc/kgrag/ca.pem",
        postgres_index_rows=500,
        postgres_hnsw_m=8,
        postgres_hnsw_ef_construction=32,
        postgres_hnsw_ef_search=150,
    )
    storage = storage_for(settings)
    params = conninfo_to_dict(storage.db.dsn)
    assert params["sslmode"] == "verify-full"  # the setting wins over the DSN's
    assert params["sslrootcert"] == "/etc/kgrag/ca.pem"
    assert (params["host"], params["dbname"], params["password"]) == ("db.example", "kg", "secret")
    assert "secret" not in storage.db.label
    options = storage.db._options
    assert (options.min_size, options.max_size, options.reconnect_s) == (2, 3, 5.0)
    assert storage.vectors("entities").index == IndexOptions(500, 8, 32, 150)


def test_without_ssl_settings_the_dsn_is_kept_as_given(tmp_path):
    storage = storage_for(Settings(workdir=tmp_path, storage="postgres", postgres_dsn=DSN))
    assert storage.db.dsn == DSN


async def test_a_pool_of_the_configured_size_serves_the_store(pg_dsn, tmp_path):
    from tests.support.postgres import fresh_workspace

    settings = Settings(
        workdir=tmp_path,
        storage="postgres",
        postgres_dsn=pg_dsn,
        postgres_workspace=fresh_workspace(),
        postgres_pool_max=2,
        postgres_sslmode="disable",
    )
    storage = storage_for(settings)
    await storage.open()
    try:
        assert storage.db._pool.max_size == 2
        await storage.set_meta("k", {"v": 1})
        assert await storage.get_meta("k") == {"v": 1}
    finally:
        await storage.drop()
