"""Text embedders: the bundled local model by default, hosted APIs by configuration.

Every embedder returns L2-normalised float32 vectors and names its *variant*: a string that
identifies the model and how vectors were made. Stores record the variant with each vector so that
a change of model or method re-embeds, and vectors of two variants are never mixed in one search.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from insight_assets.core.embedding.memo import VectorMemo
from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.ingestion.chunking import ChunkProfile, chunk_text
from insight_assets.core.startup.lazy import np
from insight_assets.core.text import count_tokens

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"


class EmbeddingError(RuntimeError):
    """An embedder could not be created or could not embed; the message says what to fix."""


@dataclass
class PartialEmbedding:
    """Vectors for some texts: ``vectors[i]`` is None where text ``i``'s batch failed, and
    ``errors[i]`` says why."""

    vectors: list[np.ndarray | None]
    errors: dict[int, str]


class Embedder(Protocol):
    variant: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into an ``(len(texts), dimension)`` array of unit vectors."""
        ...

    def embed_partial(self, texts: Sequence[str]) -> PartialEmbedding:
        """Embed ``texts``, recording a batch that fails instead of raising (a hosted service's
        persistent error); errors that would fail every batch alike (a refused key) still raise."""
        ...


class _AlwaysWhole:
    """``embed_partial`` for embedders that embed everything or raise (the local models)."""

    def embed_partial(self, texts: Sequence[str]) -> PartialEmbedding:
        return PartialEmbedding(list(self.embed(texts)), {})


def kept_embedding(embedder: Embedder) -> Callable[[Sequence[str]], np.ndarray]:
    """How to embed texts whose vectors are stored and reused (an index kept between builds): in
    batches where the embedder has them (``LocalEmbedder.embed_batched``), else its ``embed``."""
    return getattr(embedder, "embed_batched", embedder.embed)


@functools.cache
def _load_local_model(device: str, precision: str):
    """The bundled model with its weights in ``precision`` (``core.embedding.minilm``: no transformers import).

    ``bf16`` holds bfloat16 weights: on a CPU with native bf16 that runs 1.25x faster than fp32 weights
    under bf16 autocast, which casts every weight on every call (bench/README.md), and its vectors stay
    within 0.9999 cosine of fp32."""
    from insight_assets.core.runtime.heap import loading_for_good

    with loading_for_good():  # torch's modules and the weights live as long as the process
        import torch

        from insight_assets.core.embedding.minilm import MiniLM

        return MiniLM(device=device, dtype=torch.bfloat16 if precision == "bf16" else torch.float32)


def cpu_has_native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU computes bfloat16 natively (AVX-512 BF16 or AMX), read without importing torch."""
    from insight_assets.core.runtime.cores import cpu_flags

    try:
        flags = cpu_flags(cpuinfo.read_text(errors="replace"))
    except OSError:  # not Linux: play safe with fp32
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


@contextlib.contextmanager
def one_torch_thread():
    """Run torch on one thread inside the block (then restore the count); a no-op before torch is
    loaded. For one short text, such as a query: the second thread buys ~2 ms, and woken between
    LanceDB and NumPy calls it competes for the CPU with their threads, which cost ~20 ms per
    query on two cores."""
    if "torch" not in sys.modules:
        yield
        return
    # Imported, not looked up: another thread may still be importing torch (work side by side), and
    # an import waits for that to finish where sys.modules would hand out the half-made module.
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class LocalEmbedder(_AlwaysWhole):
    """all-MiniLM-L6-v2 from its wheel, with long texts embedded whole.

    The model reads at most 256 word pieces. A text longer than one window (``WINDOW``: 150 tokens)
    is cut into sentence-aware 150-token windows with a 20-token overlap, the ``passage`` chunking, and
    its vector is the token-weighted mean of the normalised window vectors, normalised again.
    Nothing is truncated; a window that still exceeds the model's 254 word pieces (dense formulas)
    is split further at word-piece boundaries. Because long texts use the passage windows, a coarse
    chunk's vector can be pooled from its passage chunks' vectors and come out the same.

    The model loads on first use, so a rerun with nothing to embed never pays for loading it.

    ``precision="bf16"`` runs the transformer with bfloat16 weights: about 2.9x faster than fp32 on
    CPUs with native bf16 (AVX-512 BF16 or AMX), mean cosine 0.99995 to fp32 and the same top-10
    neighbours for 90% of queries (bench/README.md). ``"auto"``, the default, picks bf16 on such CPUs
    and fp32 elsewhere, where emulated bf16 would be slower. The variant names the precision used.
    """

    WINDOW = ChunkProfile("window", 150, 20)
    dimension = 384
    max_word_pieces = 254  # 256 positions less [CLS] and [SEP]
    # Small batches of length-sorted texts waste little on padding: 16 beat 64 by 1.2x on 2 cores.
    default_batch_size = 16
    MEMO_TEXTS = 20_000  # 30 MB of vectors
    precisions = ("auto", "fp32", "bf16")

    def __init__(self, *, batch_size: int | None = None, precision: str = "auto", device: str = "cpu"):
        if precision not in self.precisions:
            raise EmbeddingError(f"precision must be one of {', '.join(self.precisions)}, got {precision!r}")
        self.batch_size = batch_size or self.default_batch_size
        if precision == "auto":
            precision = "bf16" if device == "cpu" and cpu_has_native_bf16() else "fp32"
        self.precision = precision
        self.device = device
        window = self.WINDOW
        self.variant = f"local:{LOCAL_MODEL_NAME}:sent{window.target_tokens}o{window.overlap_tokens}:meanpool:{precision}"
        # ``embed``'s vectors: each is its text's alone, so it may be handed out again (a build asks
        # one question of several methods and baselines).
        self._memo = VectorMemo(self.MEMO_TEXTS)

    @property
    def model(self):
        """The loaded ``core.embedding.minilm.MiniLM`` at this precision (loaded on first use)."""
        return _load_local_model(self.device, self.precision)

    def windows(self, text: str) -> list[tuple[str, int]]:
        """``(window_text, weight)`` pairs that together cover ``text``."""
        return self._windows_many([text])[0]

    def _windows_many(self, texts: Sequence[str]) -> list[list[tuple[str, int]]]:
        candidates = [
            [(text, 1)]
            # A token is at least one UTF-8 byte: a short text (a query) fits without counting, so
            # embedding it never waits for the token encoder to load (1 s).
            if len(text.encode("utf-8")) <= self.WINDOW.target_tokens
            or count_tokens(text) <= self.WINDOW.target_tokens
            else [(text[start:end], tokens) for start, end, tokens in chunk_text(text, self.WINDOW)]
            for text in texts
        ]
        flat = [window for windows in candidates for window, _ in windows]
        # One batched call: the fast tokenizer works through the list in Rust.
        offsets = iter(encoding.offsets for encoding in self.model.word_pieces(flat))
        result = []
        for windows in candidates:
            pieces = []
            for window, weight in windows:
                window_offsets = next(offsets)
                if len(window_offsets) <= self.max_word_pieces:
                    pieces.append((window, weight))
                    continue
                for first in range(0, len(window_offsets), self.max_word_pieces):
                    span = window_offsets[first : first + self.max_word_pieces]
                    pieces.append((window[span[0][0] : span[-1][1]], len(span)))
            result.append(pieces)
        return result

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Each text's unit vector, each computed on its own, so that it depends on its text alone.

        Run in a batch, a text's vector moves with its batch-mates: the padding to the longest and
        the batch's size change the kernels' sums, by up to 0.001 a dimension (measured). Searches
        rank passages within 0.0001 of each other, so a query asked beside other queries, and a
        paper added to the collection adds some, could retrieve other passages and change answers
        that have nothing to do with the paper. Queries come here; what is embedded once and kept
        (the chunks, Insight-RAG's index of triples) takes the batched path (``embed_batched``,
        ``kept_embedding``)."""
        known = self._memo.known(texts)
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        if missing:
            known.update(zip(missing, self._embed(missing, keep_tokens=False, batch_size=1)[0], strict=True))
            self._memo.remember((text, known[text]) for text in missing)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([known[text] for text in texts])

    def embed_batched(self, texts: Sequence[str]) -> np.ndarray:
        """``embed(texts)`` in batches of ``batch_size``, length-sorted: 1.7x faster on passage
        chunks, 3x on short texts (2 cores), each vector within 0.002 a dimension of ``embed``'s.
        For vectors that are stored and reused by every later build, whatever is embedded then."""
        return self._embed(texts, keep_tokens=False, batch_size=self.batch_size)[0]

    def embed_partial(self, texts: Sequence[str]) -> PartialEmbedding:
        return PartialEmbedding(list(self.embed_batched(texts)), {})

    def embed_with_token_vectors(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray | None]]:
        """``embed_batched(texts)``, and from the same forward passes each text's token
        vectors as the late-interaction reranker reads them (``token_rows``), where the model read
        the text whole in one window; ``None`` for a text it read in windows. A build keeps both:
        running the model a second time for the token vectors cost as much again as the embedding."""
        return self._embed(texts, keep_tokens=True, batch_size=self.batch_size)

    def _embed(
        self, texts: Sequence[str], *, keep_tokens: bool, batch_size: int
    ) -> tuple[np.ndarray, list[np.ndarray | None]]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        window_texts, weights, owners = [], [], []
        whole: list[int | None] = []  # each text's window when it is one window of the whole text
        for owner, pieces in enumerate(self._windows_many(texts)):
            whole.append(len(window_texts) if len(pieces) == 1 and pieces[0][0] == texts[owner] else None)
            for window_text, weight in pieces:
                window_texts.append(window_text)
                weights.append(weight)
                owners.append(owner)
        window_vectors, window_tokens = self._encode(
            window_texts, keep_tokens=keep_tokens, batch_size=batch_size
        )
        pooled = np.zeros((len(texts), self.dimension), dtype=np.float32)
        np.add.at(pooled, np.asarray(owners), window_vectors * np.asarray(weights, dtype=np.float32)[:, None])
        tokens = [window_tokens[index] if keep_tokens and index is not None else None for index in whole]
        return normalize_rows(pooled), tokens

    def _encode(self, texts: list[str], *, keep_tokens: bool, batch_size: int) -> tuple[np.ndarray, list]:
        """Unit vectors of texts that fit the model whole: the mean of the last hidden states over
        the text's word pieces, as sentence-transformers computes it; with ``keep_tokens``, also each
        text's token vectors (``token_rows``), else an empty list.

        Texts are tokenized once and batched by word-piece count, longest first, so a batch is
        padded to nearly its own length (sentence-transformers sorts by characters: 22% of the
        positions it computed on passage chunks were padding). Pooling runs in fp32 whatever the
        transformer's precision.
        """
        import torch  # loaded with the model anyway; not at import, so the code location loads fast

        model = self.model
        encoded = model.encode(texts)
        lengths = encoded.attention_mask.sum(dim=1).tolist()
        order = sorted(range(len(texts)), key=lambda index: -lengths[index])
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        tokens: list = [None] * len(texts) if keep_tokens else []
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                width = lengths[batch[0]]  # the longest of the batch: padding beyond it is cut off
                mask = encoded.attention_mask[batch, :width]
                hidden = model.hidden_states(encoded.input_ids[batch, :width], mask).float()
                weights = mask.unsqueeze(-1).float()
                means = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
                vectors[batch] = torch.nn.functional.normalize(means, dim=1).cpu().numpy()
                for position, index in enumerate(batch if keep_tokens else ()):
                    tokens[index] = token_rows(hidden[position], lengths[index])
        return vectors, tokens


def token_rows(hidden, length: int) -> np.ndarray:
    """A text's token vectors from the model's last layer (``hidden``: one text's rows, [CLS] first,
    ``length`` of them real): unit rows in float16, without [CLS] and [SEP], as late interaction
    (``core.retrieval.rerank.LateInteraction``) scores them."""
    return normalize_rows(hidden[1 : length - 1].cpu().numpy()).astype(np.float16)


@dataclass
class EmbedderChoice:
    """Which embedder (``defs.resources.EmbedderResource`` configures the same for Dagster), made on
    first use and kept; its key read from ``api_key_env`` then."""

    provider: str = "local"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    batch_size: int | None = None
    precision: str = "auto"
    _embedder: Embedder | None = None

    def get_embedder(self) -> Embedder:
        if self._embedder is None:
            api_key = os.environ.get(self.api_key_env) if self.api_key_env else None
            self._embedder = create_embedder(
                self.provider,
                model=self.model,
                api_key=api_key,
                base_url=self.base_url,
                batch_size=self.batch_size,
                precision=self.precision,
            )
        return self._embedder


class BatchFailed(EmbeddingError):
    """One batch failed after the SDK's retries; other batches may still succeed."""


class _HostedEmbedder:
    """What hosted embedders share: batching, unit vectors whatever the service returns, and a
    batch that fails on its own recorded rather than losing the others.

    ``_embed_batch`` raises ``BatchFailed`` for an error of that batch (a 5xx or 429 the SDK's
    retries did not outlast, a timeout, an input the service refuses) and ``EmbeddingError`` for one
    that would fail every batch (a refused key, an unknown model).
    """

    batch_size: int
    dimension: int

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        outcome = self.embed_partial(texts)
        if outcome.errors:
            raise EmbeddingError(next(iter(outcome.errors.values())))
        return np.stack(outcome.vectors) if texts else np.zeros((0, self.dimension), np.float32)

    def embed_partial(self, texts: Sequence[str]) -> PartialEmbedding:
        vectors: list[np.ndarray | None] = [None] * len(texts)
        errors: dict[int, str] = {}
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                rows = normalize_rows(np.asarray(self._embed_batch(batch)))
            except BatchFailed as error:
                errors.update(dict.fromkeys(range(start, start + len(batch)), str(error)))
                continue
            self.dimension = rows.shape[1]
            vectors[start : start + len(batch)] = list(rows)
        return PartialEmbedding(vectors, errors)


@dataclass
class OpenAIEmbedder(_HostedEmbedder):
    """OpenAI's embeddings endpoint, or any server that speaks it (Ollama, vLLM, llama.cpp)."""

    model: str
    api_key: str
    base_url: str | None = None
    batch_size: int = 128
    timeout_s: float = 60.0
    # The SDK retries 408/429/5xx and connection errors with backoff, honouring Retry-After.
    max_retries: int = 4

    def __post_init__(self) -> None:
        import openai

        self._client = openai.OpenAI(
            api_key=self.api_key, base_url=self.base_url, timeout=self.timeout_s, max_retries=self.max_retries
        )
        kind = "openai-compatible" if self.base_url else "openai"
        self.variant = f"{kind}:{self.model}"
        self.dimension = 0  # known after the first call

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        import openai

        try:
            response = self._client.embeddings.create(model=self.model, input=texts)
        except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as error:
            raise EmbeddingError(
                f"The {self.variant} embedder failed: {error.message}. Check the model name, base_url and "
                "the API key's environment variable."
            ) from None
        except openai.APIError as error:
            raise BatchFailed(f"The {self.variant} embedder failed: {error.message}") from None
        return [item.embedding for item in sorted(response.data, key=lambda item: item.index)]


@dataclass
class GeminiEmbedder(_HostedEmbedder):
    """Google's embedding models through the google-genai SDK."""

    model: str
    api_key: str
    batch_size: int = 100
    base_url: str | None = None

    def __post_init__(self) -> None:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(base_url=self.base_url) if self.base_url else None
        self._client = genai.Client(api_key=self.api_key, http_options=options)
        self.variant = f"gemini:{self.model}"
        self.dimension = 0

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        from google.genai import errors

        try:
            response = self._client.models.embed_content(model=self.model, contents=texts)
        except errors.APIError as error:
            message = f"The {self.variant} embedder failed ({error.code}): {error.message}"
            # Gemini answers a wrong key with 400 "API key not valid".
            if error.code in (401, 403, 404) or "api key" in str(error.message).lower():
                raise EmbeddingError(
                    f"{message}. Check the model name and the API key's environment variable."
                ) from None
            raise BatchFailed(message) from None
        return [embedding.values for embedding in response.embeddings]


class HashingEmbedder(_AlwaysWhole):
    """Bag-of-words feature hashing: deterministic, instant, and lexical rather than semantic.

    For tests and smoke runs where loading a neural model is not worth the seconds; texts sharing
    words get similar vectors, nothing more. A build with it keeps no token vectors for the reranker
    either (``smoke_test``): that would run the neural model over every passage (32 of the 38 s of
    ingesting the corpus's broken files), and a rerank computes what it reads.
    """

    smoke_test = True
    _WORD = re.compile(r"\w+")

    def __init__(self, dimension: int = 384):
        self.dimension = dimension
        self.variant = f"hashing:bow:{dimension}"

    def _bucket(self, word: str) -> tuple[int, float]:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dimension, 1.0 if value >> 63 else -1.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in self._WORD.findall(text.lower()):
                column, sign = self._bucket(word)
                vectors[row, column] += sign
        return normalize_rows(vectors)


PROVIDERS = ("local", "openai", "openai-compatible", "gemini", "hashing")


def create_embedder(
    provider: str = "local",
    *,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    batch_size: int | None = None,
    precision: str = "auto",
) -> Embedder:
    """Build the embedder a configuration names; errors say which setting to fix.

    ``batch_size`` None means the provider's default; ``precision`` applies to the local model.
    """
    if provider == "local":
        return LocalEmbedder(batch_size=batch_size, precision=precision)
    if provider == "hashing":
        return HashingEmbedder()
    if provider not in PROVIDERS:
        raise EmbeddingError(
            f"Unknown embedding provider {provider!r}; choose one of {', '.join(PROVIDERS)}."
        )
    if not model:
        raise EmbeddingError(f"The {provider} embedder needs a model name (embedder config: model).")
    if provider == "openai-compatible" and not base_url:
        raise EmbeddingError(
            "The openai-compatible embedder needs base_url, e.g. http://localhost:11434/v1 for Ollama."
        )
    if not api_key and provider != "openai-compatible":
        raise EmbeddingError(
            f"The {provider} embedder needs an API key: set the environment variable its config names."
        )
    if provider == "gemini":
        return GeminiEmbedder(
            model=model, api_key=api_key or "", base_url=base_url, batch_size=batch_size or 100
        )
    # Local OpenAI-compatible servers usually ignore the key, but the SDK insists on one.
    return OpenAIEmbedder(
        model=model, api_key=api_key or "not-needed", base_url=base_url, batch_size=batch_size or 128
    )
