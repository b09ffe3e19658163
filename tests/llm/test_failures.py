"""Model failures in words a client may see: what happened, never where."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from kgrag.errors import ModelError, ModelRequestError, ModelServerError, ModelTimeoutError
from kgrag.llm._http import check_status, transport_error
from kgrag.llm.failures import HIDDEN, public_reason, scrub_addresses
from kgrag.llm.retry import RetryPolicy, call_with_retry

WHAT = "openai:gpt-4o-mini@10.1.2.3:8080"


async def test_a_refused_connection_after_retries_says_so() -> None:
    async def attempt() -> None:
        async with httpx.AsyncClient() as client:
            try:
                await client.get("http://127.0.0.1:1/")
            except httpx.HTTPError as exc:
                raise transport_error(exc, WHAT) from exc

    with pytest.raises(ModelServerError) as caught:
        await call_with_retry(RetryPolicy(max_retries=1, base=0.01), attempt)
    assert "10.1.2.3" in str(caught.value)  # the operator's message names the endpoint
    assert public_reason(caught.value, "the chat model") == "the chat model refused the connection"


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (500, ModelServerError, "kept failing (HTTP 500)"),
        (401, ModelRequestError, "refused the request (HTTP 401)"),
        (429, ModelError, "kept refusing requests as too many (HTTP 429)"),
    ],
)
def test_an_http_status_is_named_without_the_body(status: int, kind: type, words: str) -> None:
    body = {"error": {"message": f"upstream http://10.1.2.3:8080/v1 said no ({status})"}}
    response = httpx.Response(status, json=body, request=httpx.Request("POST", "http://x"))
    with pytest.raises(kind) as caught:
        check_status(response, WHAT)
    assert public_reason(caught.value) == f"the model service {words}"


async def test_a_bound_that_ran_out_names_its_seconds() -> None:
    try:
        async with asyncio.timeout(0.01):
            await asyncio.sleep(1)
    except TimeoutError as exc:
        error = ModelTimeoutError(f"the chat model ({WHAT}) did not answer within 0.01 s")
        error.__cause__ = exc
    reason = public_reason(error, "the chat model", 0.01)
    assert reason == "the chat model did not answer within 0.01 s"
    assert public_reason(ModelError(f"{WHAT}: ?"), "the chat model") == "the chat model failed"


def test_an_error_s_own_public_words_win() -> None:
    error = ModelError(f"{WHAT} broke")
    error.public = "the chat model is resting"
    wrapped = ModelError("again")
    wrapped.__cause__ = error
    assert public_reason(wrapped) == "the chat model is resting"


def test_scrub_hides_urls_and_addresses_and_keeps_the_model_name() -> None:
    text = (
        f"ModelServerError: {WHAT}: connection failed; see http://10.1.2.3:8080/v1/chat "
        "or localhost:11434 and [::1]:9000 at 12:30"
    )
    shown = scrub_addresses(text)
    assert "10.1.2.3" not in shown and "11434" not in shown and "9000" not in shown, shown
    assert "openai:gpt-4o-mini:" in shown and HIDDEN in shown and "12:30" in shown
