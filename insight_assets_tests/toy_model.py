"""A toy "model" behind the fake server: it reads each task's prompt and writes a valid answer, and a
fault injector that makes a share of the calls fail the ways real providers do.

The toy model knows the prompts of the curation and insight chain (compression, questions and their
refinement, cited answers, intents, insights and the RAG baselines' queries, passage and re-rank,
both judges) well enough to answer them within their
schemas and grounding checks: it cites only titles and passage ids the prompt shows. A repair request
is answered from the conversation's first prompt. Answers depend on the prompt alone, so a rerun gets
the same answers.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field

from insight_assets_tests.fake_model_server import Failure, Received, Reply

# Words the toy questions are made of, chosen per question so that no two are near-duplicates.
_VOCABULARY = [
    "citation",
    "graphs",
    "embeddings",
    "retrieval",
    "ranking",
    "summaries",
    "evidence",
    "datasets",
    "annotation",
    "benchmarks",
    "transformers",
    "attention",
    "pretraining",
    "transfer",
    "supervision",
    "negatives",
    "sampling",
    "scale",
    "efficiency",
    "interpretability",
    "bias",
    "fairness",
    "robustness",
    "generalization",
    "domains",
    "languages",
    "readers",
    "authors",
    "venues",
    "metadata",
    "abstracts",
    "sections",
    "figures",
    "tables",
    "equations",
    "claims",
    "contradictions",
    "novelty",
    "relevance",
    "recommendation",
    "search",
    "discovery",
    "curation",
    "reproducibility",
    "evaluation",
    "metrics",
    "humans",
    "experts",
    "novices",
]


def first_prompt(request: Received) -> str:
    """The conversation's first user message: the task prompt, also for a repair request."""
    if request.api == "openai":
        return next(m["content"] for m in request.body["messages"] if m["role"] == "user")
    return request.last_user_text()


def _digest(*parts: object) -> int:
    return int(hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()[:12], 16)


def _section(prompt: str, heading: str) -> list[str]:
    """The non-empty lines after ``heading`` up to the next blank line."""
    text = prompt.split(heading, 1)[1]
    lines = text.lstrip("\n").split("\n\n", 1)[0].splitlines()
    return [line for line in lines if line.strip()]


def _words_between(prompt: str) -> tuple[int, int]:
    low, high = re.search(r"between (\d+) and (\d+) words", prompt).groups()
    return int(low), int(high)


def _question(prompt: str, number: int, low: int, high: int) -> str:
    length = (low + high) // 2
    seed = _digest(prompt, number)
    words = [_VOCABULARY[(seed // (7**i)) % len(_VOCABULARY)] for i in range(length - 6)]
    return "How do " + " ".join(words) + " change what the papers assume about research?"


def answer(prompt: str) -> dict | str:
    """A valid answer to the task whose prompt this is: a JSON object, or prose (a ``str``)."""
    if prompt.startswith("You compress a research paper"):
        title = re.search(r"^Title: (.*)$", prompt, re.MULTILINE).group(1)
        return {
            "main_topics": [f"the ideas of {title[:60]}"],
            "contributions": [f"The paper titled {title[:80]} proposes a method for scholarly documents."],
            "key_findings": ["The method outperforms the baselines it is compared with."],
            "conclusions": ["The approach generalizes to related tasks, with limitations the paper states."],
        }
    if prompt.startswith("You write questions"):
        count = int(re.search(r"Write (\d+) questions", prompt).group(1))
        low, high = _words_between(prompt)
        return {"questions": [_question(prompt, number, low, high) for number in range(count)]}
    if prompt.startswith("You curate questions"):
        quota = int(re.search(r"Select at most (\d+)", prompt).group(1))
        low, high = _words_between(prompt)
        candidates = [
            (int(match[1]), match[2])
            for line in _section(prompt, "each with its number in square brackets:\n")
            if (match := re.match(r"\[(\d+)\] (.*)", line))
        ]
        fitting = [(n, q) for n, q in candidates if low <= len(q.split()) <= high and q.endswith("?")]
        return {"selected": [{"number": n, "question": q} for n, q in fitting[:quota]]}
    if prompt.startswith("You answer an open-ended research question"):
        titles = [line[2:] for line in _section(prompt, "The exact titles you may cite are:\n")]
        cited = titles[: 2 if len(titles) > 1 else 1]
        text = " and ".join(f'"{title}"' for title in cited)
        question = re.search(r"^Question: (.*)$", prompt, re.MULTILINE).group(1).rstrip("?")
        return {"answer": f"Read together, {text} answer this: {question}.", "cited_titles": cited}
    if "work out who is probably asking" in prompt:
        return {
            "persona": "a researcher comparing approaches",
            "intent": "To understand how the approaches differ and when each applies.",
            "goals": ["the trade-offs between approaches", "open problems"],
        }
    if prompt.startswith("You help people explore research papers by adding related insights"):
        aliases = re.findall(r"^\[([^\]\s]+)\] ", prompt, re.MULTILINE)
        most = int(re.search(r"Write between 1 and (\d+) insights", prompt).group(1))
        return {
            "insights": [
                {
                    "type": "tradeoff",
                    "hook": f"A trade-off in passage {alias}",
                    "body": f"Passage {alias} weighs cost against quality in a way the answer leaves out.",
                    "realization": "Choosing an approach means choosing what to give up.",
                    "justification": "The answer presents one side only.",
                    "chunk_ids": [alias],
                    "relevance": 4,
                    "novelty": 3 + number % 3,
                    "usefulness": 4,
                    "intent_alignment": 4,
                }
                for number, alias in enumerate(aliases[: min(2, most)])
            ]
        }
    if prompt.startswith("You are an impartial judge"):
        single = "comparing single insights" in prompt
        labels = sorted(set(re.findall(r"Method [A-Z]", prompt)))
        return {
            "scores": [
                {
                    "label": label,
                    "novelty": 5 - position % 5,
                    "diversity": None if single else 4 - position % 4,
                    "relevance": 3,
                    "depth": 3,
                    "overall": 4 - position % 3,
                    "rationale": "scripted",
                }
                for position, label in enumerate(labels)
            ]
        }
    if prompt.startswith(("You break a question", "You rewrite a question", "You refine a search")):
        question = re.search(r"^Question: (.*)$", prompt, re.MULTILINE).group(1).rstrip("?")
        return {"queries": [f"{question} methods", f"{question} limitations"]}
    if prompt.startswith("Write a short passage, as it could appear in a research paper"):
        question = re.search(r"^Question: (.*)$", prompt, re.MULTILINE).group(1).rstrip("?")
        return f"We study {question}; our experiments compare the approaches on standard benchmarks."
    if prompt.startswith("You judge how relevant passages"):
        ids = re.findall(r"^\[(P\d+)\] ", prompt, re.MULTILINE)
        return {"ratings": [{"id": i, "relevance": 5 - n % 5} for n, i in enumerate(ids)]}
    raise AssertionError(f"the toy model does not know this prompt: {prompt[:120]!r}")


FAULT_KINDS = ("rate_limited", "server_error", "timeout", "malformed_json", "truncated_json")


@dataclass
class FaultyModel:
    """The toy model behind a fault injector: each request fails with probability ``rate``, in one of
    ``FAULT_KINDS``. Whether and how an attempt fails is a function of its conversation and of how
    many times that conversation was sent before, so a run fails the same way whatever the order of
    its concurrent calls, and a retry is a fresh draw. ``healthy`` switches the faults off.

    Records, per conversation's first prompt, whether a valid answer was delivered (a timeout's late
    reply is not: the client gave up on it)."""

    timeout_s: float
    rate: float = 0.2
    seed: int = 0
    healthy: bool = False
    faults: Counter = field(default_factory=Counter)
    answered: set[str] = field(default_factory=set)
    _seen: Counter = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Received) -> Reply | Failure:
        prompt = first_prompt(request)
        value = answer(prompt)
        prose = isinstance(value, str)
        valid = value if prose else json.dumps(value)
        conversation = json.dumps(request.body.get("messages") or request.body, sort_keys=True)
        with self._lock:
            attempt = self._seen[conversation]
            self._seen[conversation] += 1
        draw = _digest(self.seed, conversation, attempt)
        kind = None if self.healthy or draw % 1000 >= self.rate * 1000 else FAULT_KINDS[(draw // 1000) % 5]
        with self._lock:
            self.faults[kind] += 1
            if kind is None:
                self.answered.add(prompt)
        if kind == "rate_limited":
            # As OpenAI says it: milliseconds, and whole seconds for clients that read only those.
            return Failure(429, "Rate limit reached", headers={"retry-after-ms": "100", "Retry-After": "1"})
        if kind == "server_error":
            return Failure(500, "The server had an error while processing your request")
        if kind == "timeout":
            return Reply(valid, delay_s=self.timeout_s + 1.0)
        if kind in ("malformed_json", "truncated_json") and prose:
            return Reply("")  # what spoils prose as surely as bad JSON spoils an object
        if kind == "malformed_json":
            return Reply("Sure! Here is the JSON you asked for: {answer: unquoted, 'and' single quotes}")
        if kind == "truncated_json":
            return Reply(valid[: len(valid) // 2])
        return Reply(valid)
