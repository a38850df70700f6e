"""The paper's interpretation path: an LLM behind an OpenAI-compatible chat-completions API proposes
descriptions of a feature from its top-activating and non-activating texts, and annotates texts with a
hypothesis (yes/no). Used at full scale; tested against a stub server on 127.0.0.1 (no LLM here).
"""
from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request

import numpy as np

INTERPRET_PROMPT = """You are studying a feature of a text model. Below are texts where the feature is strongly \
active and texts where it is not active. Propose {n} different short natural-language descriptions of the \
property that the active texts share and the inactive texts lack, each starting with a verb, e.g. \
"mentions being surprised or shocked". Answer with exactly {n} lines, each starting with "- ".

Active texts:
{high}

Inactive texts:
{low}"""

ANNOTATE_PROMPT = """Does the following text satisfy this description: "{hypothesis}"?
Answer with a single word, yes or no.

Text: {text}"""

SIMILARITY_PROMPT = """Do these two descriptions of text describe the same property? Answer with one word: \
yes (same), related (partly overlapping), or no.
A: {a}
B: {b}"""


class LLMError(RuntimeError):
    pass


class ChatClient:
    """Minimal OpenAI-compatible client: POST {endpoint}/chat/completions, returns the message content."""

    def __init__(self, endpoint: str, model: str, api_key_env: str | None = None, timeout_s: float = 60.0):
        self.endpoint, self.model, self.timeout_s = endpoint.rstrip("/"), model, timeout_s
        self.api_key = os.environ.get(api_key_env, "") if api_key_env else ""

    def chat(self, prompt: str, temperature: float = 0.0, max_tokens: int = 256) -> str:
        body = json.dumps({"model": self.model, "temperature": temperature, "max_tokens": max_tokens,
                           "messages": [{"role": "user", "content": prompt}]}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = f"{self.endpoint}/chat/completions"
        req = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                raw = resp.read()
        except (urllib.error.URLError, OSError) as e:
            raise LLMError(f"LLM endpoint {url} (config hypothesaes.interpreter.llm.endpoint) failed: {e}; "
                           "check the server is up and the endpoint ends before /chat/completions") from e
        try:
            reply = json.loads(raw)
            content = reply["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise LLMError(f"LLM endpoint {url}: malformed reply (expected JSON with "
                           f"choices[0].message.content): {raw[:200]!r}") from e
        if not isinstance(content, str):
            raise LLMError(f"LLM endpoint {url}: choices[0].message.content is not a string: {content!r}")
        return content


def parse_bullets(reply: str, n: int) -> list[str]:
    items = [m.group(1).strip() for m in re.finditer(r"^\s*[-*]\s+(.+)$", reply, flags=re.M)]
    if not items:
        raise LLMError(f"interpretation reply has no '- ' lines: {reply[:200]!r}")
    return items[:n]


def parse_yes_no(reply: str) -> bool:
    word = re.sub(r"[^a-z]", "", reply.strip().split()[0].lower()) if reply.strip() else ""
    if word not in ("yes", "no"):
        raise LLMError(f"annotation reply is neither yes nor no: {reply[:100]!r}")
    return word == "yes"


class LLMInterpreter:
    """Interpreter (see interpret.py) backed by a ChatClient; annotations are cached per (text, hypothesis)."""

    def __init__(self, texts: list[str], client: ChatClient, temperature: float = 0.7, max_chars: int = 512):
        self.texts, self.client, self.temperature, self.max_chars = texts, client, temperature, max_chars
        self._cache: dict[tuple[int, str], bool] = {}

    def propose(self, high: np.ndarray, low: np.ndarray, n: int) -> list[str]:
        fmt = lambda idx: "\n".join(f"- {self.texts[i][:self.max_chars]}" for i in idx)  # noqa: E731
        reply = self.client.chat(INTERPRET_PROMPT.format(n=n, high=fmt(high), low=fmt(low)), self.temperature)
        return parse_bullets(reply, n)

    def annotate(self, idx: np.ndarray, hypothesis: str) -> np.ndarray:
        out = np.zeros(len(idx), dtype=bool)
        for j, i in enumerate(np.asarray(idx, dtype=int)):
            key = (int(i), hypothesis)
            if key not in self._cache:
                prompt = ANNOTATE_PROMPT.format(hypothesis=hypothesis, text=self.texts[i][:self.max_chars])
                self._cache[key] = parse_yes_no(self.client.chat(prompt, 0.0, max_tokens=3))
            out[j] = self._cache[key]
        return out

    def similarity(self, a: str, b: str) -> float:
        """Surface similarity of two hypotheses: 1 (same), 0.5 (related), 0 (official evaluation.py scale)."""
        reply = self.client.chat(SIMILARITY_PROMPT.format(a=a, b=b), 0.0, max_tokens=3).strip().lower()
        for word, value in (("yes", 1.0), ("related", 0.5), ("no", 0.0)):
            if reply.startswith(word):
                return value
        raise LLMError(f"similarity reply is not yes/related/no: {reply[:100]!r}")
