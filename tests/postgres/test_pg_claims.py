"""Claims on single keys: workers writing the deferred summaries share them out."""

from __future__ import annotations


async def test_two_claims_get_disjoint_shares_and_release_them(pg_storage):
    keys = [f"n:{i:03d}" for i in range(10)]
    async with pg_storage.claim_keys(keys, 4) as first:
        assert first == keys[:4]
        async with pg_storage.claim_keys(keys, 4) as second:
            assert second == keys[4:8]  # held ones are skipped, not waited for
            async with pg_storage.claim_keys(keys, 10) as third:
                assert third == keys[8:]
    async with pg_storage.claim_keys(keys, 10) as again:
        assert again == keys  # every claim was released


async def test_a_claim_is_released_when_its_block_fails(pg_storage):
    try:
        async with pg_storage.claim_keys(["n:a"], 1) as mine:
            assert mine == ["n:a"]
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    async with pg_storage.claim_keys(["n:a"], 1) as mine:
        assert mine == ["n:a"]
