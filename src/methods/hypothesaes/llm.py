"""The paper's interpretation path: an LLM behind an OpenAI-compatible chat-completions API proposes
descriptions of a feature from its top-activating and non-activating texts, and annotates texts with a
hypothesis (yes/no). Used at full scale; tested against a stub server on 127.0.0.1 (no LLM here).

The client is the `openai` SDK (as the official llm_api.py), pointed at any OpenAI-compatible base URL
(OpenAI, vLLM, a local server): it retries rate limits (429), server errors and dropped connections with
exponential back-off (`max_retries`). Replies are cached on disk (`ReplyCache`, one SQLite file per job),
keyed by the whole request, so a resubmitted job replays what it already paid for (the official code
caches its annotations in a JSON file the same way) and a rerun with the same data is identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import openai

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


# The official llm_api.py sends this when no key is needed (a local server); the SDK insists on some key.
NO_KEY = "local-no-auth"


class ReplyCache:
    """Chat replies on disk: a SQLite table {sha256 of the request: reply}, committed after every reply, so a
    job killed midway keeps what it received. One file per job (no concurrent writers)."""

    def __init__(self, path: str | Path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = str(path)
        self._lock = threading.Lock()  # annotation threads share one connection
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
        self._db.commit()

    @staticmethod
    def key(request: dict) -> str:
        return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()

    def get(self, request: dict) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (self.key(request),)).fetchone()
        return None if row is None else row[0]

    def put(self, request: dict, reply: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (self.key(request), reply))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]


class ChatClient:
    """An OpenAI-compatible chat-completions client (the `openai` SDK): `chat(prompt)` returns the reply's text.

    endpoint: the base URL up to /v1 (config hypothesaes.interpreter.llm.endpoint); api_key_env: the variable
    that holds the key (none for a local server that needs none); max_retries: the SDK's retries of 429, 5xx
    and connection errors; cache: a ReplyCache path, or None for no disk cache."""

    def __init__(
        self,
        endpoint: str,
        model: str,
        api_key_env: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 5,
        cache: str | Path | None = None,
    ):
        self.endpoint, self.model = endpoint.rstrip("/"), model
        key = NO_KEY
        if api_key_env:
            key = os.environ.get(api_key_env, "")
            if not key:
                raise LLMError(
                    f"config hypothesaes.interpreter.llm.api_key_env names {api_key_env}, which is not set; "
                    f"export {api_key_env}=<your key>, or remove api_key_env for a server that needs none"
                )
        self.client = openai.OpenAI(base_url=self.endpoint, api_key=key, timeout=timeout_s, max_retries=max_retries)
        self.cache = ReplyCache(cache) if cache else None

    def chat(self, prompt: str, temperature: float = 0.0, max_tokens: int = 256) -> str:
        request = {
            "model": self.model,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}],
        }
        if self.cache is not None and (hit := self.cache.get(request)) is not None:
            return hit
        url = f"{self.endpoint}/chat/completions"
        try:
            reply = self.client.chat.completions.create(**request)
        except openai.APIConnectionError as e:
            raise LLMError(
                f"LLM endpoint {url} (config hypothesaes.interpreter.llm.endpoint) failed: {e}; "
                "check the server is up and the endpoint ends before /chat/completions"
            ) from e
        except openai.APIStatusError as e:
            raise LLMError(
                f"LLM endpoint {url}: HTTP {e.status_code} after the client's retries "
                f"(config hypothesaes.interpreter.llm.max_retries): {str(e)[:200]}"
            ) from e
        except (openai.APIResponseValidationError, ValueError) as e:
            raise LLMError(
                f"LLM endpoint {url}: malformed reply (expected JSON with choices[0].message.content): {str(e)[:200]}"
            ) from e
        choices = getattr(reply, "choices", None)
        content = choices[0].message.content if choices else None
        if not isinstance(content, str):
            raise LLMError(
                f"LLM endpoint {url}: malformed reply (expected JSON with choices[0].message.content "
                f"a string): {str(reply)[:200]}"
            )
        if self.cache is not None:
            self.cache.put(request, content)
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
    """Interpreter (see interpret.py) backed by a ChatClient; annotations are kept per (text, hypothesis), and
    the texts not yet annotated with a hypothesis are asked `workers` at a time (threads, as the official
    annotate's n_workers)."""

    def __init__(
        self, texts: list[str], client: ChatClient, temperature: float = 0.7, max_chars: int = 512, workers: int = 1
    ):
        self.texts, self.client, self.temperature, self.max_chars = texts, client, temperature, max_chars
        self.workers = max(1, int(workers))
        self._cache: dict[tuple[int, str], bool] = {}

    def propose(self, high: np.ndarray, low: np.ndarray, n: int) -> list[str]:
        fmt = lambda idx: "\n".join(f"- {self.texts[i][: self.max_chars]}" for i in idx)  # noqa: E731
        reply = self.client.chat(INTERPRET_PROMPT.format(n=n, high=fmt(high), low=fmt(low)), self.temperature)
        return parse_bullets(reply, n)

    def _ask(self, i: int, hypothesis: str) -> bool:
        prompt = ANNOTATE_PROMPT.format(hypothesis=hypothesis, text=self.texts[i][: self.max_chars])
        return parse_yes_no(self.client.chat(prompt, 0.0, max_tokens=3))

    def annotate(self, idx: np.ndarray, hypothesis: str) -> np.ndarray:
        idx = [int(i) for i in np.asarray(idx, dtype=int)]
        todo = [i for i in dict.fromkeys(idx) if (i, hypothesis) not in self._cache]
        if self.workers > 1 and len(todo) > 1:
            with ThreadPoolExecutor(max_workers=self.workers) as pool:
                answers = list(pool.map(lambda i: self._ask(i, hypothesis), todo))
        else:
            answers = [self._ask(i, hypothesis) for i in todo]
        self._cache.update({(i, hypothesis): a for i, a in zip(todo, answers)})
        return np.array([self._cache[(i, hypothesis)] for i in idx], dtype=bool)

    def similarity(self, a: str, b: str) -> float:
        """Surface similarity of two hypotheses: 1 (same), 0.5 (related), 0 (official evaluation.py scale)."""
        reply = self.client.chat(SIMILARITY_PROMPT.format(a=a, b=b), 0.0, max_tokens=3).strip().lower()
        for word, value in (("yes", 1.0), ("related", 0.5), ("no", 0.0)):
            if reply.startswith(word):
                return value
        raise LLMError(f"similarity reply is not yes/related/no: {reply[:100]!r}")
