"""The full-scale LLM path (the `openai` SDK) against a stub OpenAI-compatible server on 127.0.0.1 (no LLM is
reachable here): requests, answers, malformed replies, retries of rate limits, the on-disk reply cache."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from methods.hypothesaes.interpret import InterpretConfig, interpret_feature
from methods.hypothesaes.llm import ChatClient, LLMError, LLMInterpreter


class _Stub(BaseHTTPRequestHandler):
    mode = "ok"
    requests: list = []
    rate_limited = 0  # how many requests still get HTTP 429

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Stub.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        prompt = body["messages"][0]["content"]
        if _Stub.rate_limited > 0:
            _Stub.rate_limited -= 1
            payload = b'{"error": {"message": "Rate limit reached", "type": "requests"}}'
            self.send_response(429)
            self.send_header("Content-Type", "application/json")
            self.send_header("retry-after-ms", "5")  # the SDK waits this long before its retry
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        if _Stub.mode == "malformed":
            payload = b'{"choices": []}'
        elif _Stub.mode == "not_json":
            payload = b"<html>gateway error</html>"
        else:
            if prompt.startswith("You are studying"):
                content = "- mentions dogs\n- mentions pets\n- mentions animals"
            elif prompt.startswith("Does the following text"):
                text = prompt.split("Text: ", 1)[1]
                content = "maybe" if "weird" in text else ("Yes" if "dog" in text and "dogs" in prompt else "no")
            else:
                content = "maybe"
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def stub_url():
    server = HTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


@pytest.fixture(autouse=True)
def _reset():
    _Stub.mode, _Stub.requests, _Stub.rate_limited = "ok", [], 0


def test_interpreter_and_annotator_through_the_api(stub_url, monkeypatch):
    monkeypatch.setenv("HS_TEST_KEY", "sk-test")
    texts = [f"a dog number {i}" for i in range(30)] + [f"a cat number {i}" for i in range(30)]
    act = np.r_[np.linspace(1, 2, 30), np.zeros(30)]
    interp = LLMInterpreter(texts, ChatClient(stub_url, "stub-model", "HS_TEST_KEY"))
    idx = np.arange(60)
    cfg = InterpretConfig(high_quantile=0.5, n_examples=3, n_candidates=3, n_score=5)
    h = interpret_feature((idx, act), (idx, act), 0.0, interp, cfg, np.random.default_rng(0))
    assert h["candidates"] == ["mentions dogs", "mentions pets", "mentions animals"]
    assert h["hypothesis"] == "mentions dogs" and h["f1"] == 1.0
    first = _Stub.requests[0]
    assert first["path"] == "/v1/chat/completions" and first["body"]["model"] == "stub-model"
    assert first["auth"] == "Bearer sk-test" and first["body"]["temperature"] == 0.7
    first_pass = interp.annotate(np.arange(28, 33), "mentions dogs")
    n = len(_Stub.requests)
    assert list(first_pass) == [True, True, False, False, False]
    assert list(interp.annotate(np.arange(28, 33), "mentions dogs")) == list(first_pass)
    assert len(_Stub.requests) == n  # cached: no new requests


@pytest.mark.parametrize("mode", ["malformed", "not_json"])
def test_malformed_reply_is_a_clear_error(stub_url, mode):
    _Stub.mode = mode
    with pytest.raises(LLMError, match="malformed reply.*choices\\[0\\].message.content"):
        ChatClient(stub_url, "m").chat("hello")


def test_unparseable_annotation_names_the_reply(stub_url):
    interp = LLMInterpreter(["some weird text"], ChatClient(stub_url, "m"))
    with pytest.raises(LLMError, match="neither yes nor no: 'maybe'"):
        interp.annotate(np.array([0]), "x")


def test_unreachable_endpoint_names_the_config_key():
    with pytest.raises(LLMError, match="hypothesaes.interpreter.llm.endpoint"):
        ChatClient("http://127.0.0.1:9/v1", "m", timeout_s=2, max_retries=0).chat("hi")


def test_a_rate_limit_is_retried(stub_url):
    _Stub.rate_limited = 2
    assert (
        ChatClient(stub_url, "m", max_retries=3).chat("You are studying x")
        == "- mentions dogs\n- mentions pets\n- mentions animals"
    )
    assert len(_Stub.requests) == 3  # two 429s, then the answer


def test_exhausted_retries_name_the_status_and_the_config_key(stub_url):
    _Stub.rate_limited = 10
    with pytest.raises(LLMError, match="HTTP 429 after the client's retries.*max_retries"):
        ChatClient(stub_url, "m", max_retries=1).chat("hi")
    assert len(_Stub.requests) == 2


def test_replies_are_cached_on_disk_across_clients(stub_url, tmp_path):
    """A resubmitted job (a new client on the same cache file) replays the replies it already received."""
    cache = tmp_path / "llm" / "cache.sqlite"
    first = ChatClient(stub_url, "stub-model", cache=cache)
    texts = ["a dog here", "a cat there"]
    assert list(LLMInterpreter(texts, first).annotate(np.arange(2), "mentions dogs")) == [True, False]
    n = len(_Stub.requests)
    assert n == 2 and len(first.cache) == 2
    again = LLMInterpreter(texts, ChatClient(stub_url, "stub-model", cache=cache))
    assert list(again.annotate(np.arange(2), "mentions dogs")) == [True, False]
    assert len(_Stub.requests) == n  # nothing asked twice
    other = LLMInterpreter(texts, ChatClient(stub_url, "other-model", cache=cache))
    other.annotate(np.arange(1), "mentions dogs")
    assert len(_Stub.requests) == n + 1  # the key includes the model


def test_a_configured_key_variable_that_is_unset_is_named(monkeypatch):
    monkeypatch.delenv("HS_MISSING_KEY", raising=False)
    with pytest.raises(LLMError, match="HS_MISSING_KEY, which is not set"):
        ChatClient("http://127.0.0.1:9/v1", "m", api_key_env="HS_MISSING_KEY")


def test_annotation_in_parallel_gives_the_sequential_answers(stub_url, tmp_path):
    texts = [f"a {'dog' if i % 3 else 'cat'} number {i}" for i in range(40)]
    idx = np.r_[np.arange(40), np.arange(5)]  # repeated texts are asked once
    serial = LLMInterpreter(texts, ChatClient(stub_url, "m")).annotate(idx, "mentions dogs")
    n = len(_Stub.requests)
    assert n == 40
    parallel = LLMInterpreter(texts, ChatClient(stub_url, "m", cache=tmp_path / "c.sqlite"), workers=8)
    assert parallel.annotate(idx, "mentions dogs").tolist() == serial.tolist()
    assert len(_Stub.requests) == 2 * n and len(parallel.client.cache) == 40
