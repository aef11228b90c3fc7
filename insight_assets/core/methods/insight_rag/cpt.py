"""The insight retriever's continual pre-training with LoRA (§2, Appendix B), following Pezeshkpour
& Hruschka (2025): a causal LM trained on the collection's triples verbalised as sentences and on
its own text, so that, given an insight fragment (subject + relation), it completes the insight from
what it memorised.

The paper trains Llama-3.2 3B for 30 epochs on the whole papers and the triples, choosing by training
loss from ``PAPER_GRID``; about 7 hours on 8 A100s per dataset. The defaults here are sized for 2 CPU
cores: the bundled SmolLM2-135M, the grid's highest learning rate, rank 8, alpha 16, dropout 0.05,
4 epochs, and a budget of 25,000 training tokens per epoch (every triple first, then the sentences
they were read in). On ``nlp-embeddings`` (20 papers, 2,079 triples) that trains at ~230 tokens/s in
about 8 minutes on 2 CPU cores, and the share of probed facts recalled goes 0 -> 0.21 -> 0.33 -> 0.42
-> 0.42 over the epochs. ``max_epoch_tokens=None`` trains on every triple and sentence, as the paper
does (slower).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from insight_assets.core.runtime.cores import available_cores
from insight_assets.core.runtime.stage_settings import Settings

from .causal_lm import BaseModelSource, CausalLM, device_name, load_base, no_library_notices, quiet
from .scores import exact_match

if TYPE_CHECKING:
    from .triples import Triple

# Appendix B's grid, searched by training loss in the paper; one point of it is the default here.
PAPER_GRID = {
    "learning_rate": (3e-3, 1e-3, 3e-4, 1e-4, 3e-5),
    "rank": (4, 8, 16),
    "alpha": (8, 16, 32),
    "dropout": (0.05, 0.1),
}
PAPER_EPOCHS = 30
# The projections LoRA adapts: attention and MLP of a llama-shaped model.
TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
TRAINING_FILE = "training.json"
# The bundled SmolLM2-135M's LoRA training on a CPU, probes included, in training texts' tokens
# (as ``count_tokens`` counts them) per second and core: the demo's second epoch, 10,267 tokens in
# 108 s on 2 cores (x86_64, AVX-512, torch 2.13). Only for the estimate a CPU-only build gives.
CPU_TOKENS_PER_CORE_SECOND = 48.0


class CPTSettings(Settings):
    """LoRA continual pre-training (Appendix B; see the module's docstring for the paper's values).
    The paper grid-searches learning rate {3e-3, 1e-3, 3e-4, 1e-4, 3e-5}, rank {4, 8, 16}, alpha
    {8, 16, 32} and dropout {0.05, 0.1} by training loss, for 30 epochs on the whole papers, on GPUs."""

    base_model: str | None = Field(
        default=None,
        description="A Hugging Face model directory or a GGUF file; unset: the bundled SmolLM2-135M.",
    )
    learning_rate: float = Field(default=3e-3, gt=0.0, lt=1.0, description="AdamW's learning rate.")
    rank: int = Field(default=8, ge=1, description="LoRA rank r.")
    alpha: int = Field(default=16, ge=1, description="LoRA alpha.")
    dropout: float = Field(default=0.05, ge=0.0, lt=1.0, description="LoRA dropout.")
    epochs: int = Field(default=4, ge=1, description="Passes over the training texts (the paper: 30).")
    batch_size: int = Field(default=16, ge=1, description="Texts per optimiser step.")
    block_tokens: int = Field(default=64, ge=1, description="A training text's tokens, at most.")
    max_epoch_tokens: int | None = Field(
        default=25_000,
        ge=1,
        description="Training tokens per epoch: every triple first, then the sentences they were read in; "
        "unset: all of them, as the paper does (slower).",
    )
    probes: int = Field(
        default=24, ge=0, description="Trained facts asked back after each epoch (the memorisation curve)."
    )
    seed: int = Field(default=13, description="Shuffling and initialisation seed.")

    def key_fields(self) -> dict:
        """What the adapter depends on (not the probes, which only measure it)."""
        return {k: v for k, v in self.model_dump().items() if k not in ("base_model", "probes")}


class TrainingDiverged(RuntimeError):
    """The loss stopped being a number: no adapter is kept."""

    def __init__(self, step: int, epoch: int, loss: float):
        super().__init__(
            f"training diverged at step {step} (epoch {epoch}): loss {loss}; lower the learning rate"
        )
        self.step, self.epoch, self.loss = step, epoch, loss


@dataclass(frozen=True)
class Probe:
    """A trained fact asked back: its fragment and the object the completion should hold."""

    fragment: str
    gold: str


@dataclass
class Training:
    """What a training did (or, reused, had done): read back from the adapter's folder."""

    base_model: str
    base_parameters: int
    device: str
    epochs: int
    texts: int
    training_tokens: int  # tokens seen, over all epochs
    seconds: float
    epoch_losses: list[float] = field(default_factory=list)
    probe_accuracy: list[float] = field(default_factory=list)  # before training, then after each epoch

    @property
    def final_loss(self) -> float:
        return self.epoch_losses[-1] if self.epoch_losses else float("nan")


def verbalise(triple: Triple) -> str:
    """A triple as the sentence it is trained as: subject, relation as written, object."""
    return f"{triple.text}."


def training_texts(
    triples: Sequence[Triple], settings: CPTSettings, count_tokens: Callable[[str], int]
) -> list[str]:
    """Every triple verbalised, then the sentences they were read in, within the epoch budget: the
    facts first, so that a budget cuts context, not facts (a seeded sample of facts if even they do
    not fit); and under a budget no more tokens of sentences than of facts, so that a small
    collection's epochs are not filled with context."""
    facts = list(dict.fromkeys(verbalise(t) for t in triples))
    sentences = [s for s in dict.fromkeys(t.sentence.strip() for t in triples) if s]
    if settings.max_epoch_tokens is None:
        return facts + sentences
    random.Random(settings.seed).shuffle(facts)
    kept, used = _within(facts, settings.max_epoch_tokens, settings.block_tokens, count_tokens)
    context, _ = _within(
        sentences, min(used, settings.max_epoch_tokens - used), settings.block_tokens, count_tokens
    )
    return kept + context


def _within(
    texts: Sequence[str], budget: int, block_tokens: int, count_tokens: Callable[[str], int]
) -> tuple[list[str], int]:
    """The texts that fit ``budget`` tokens, in order (each costs its tokens, at most a block, and
    the end-of-text token), and the tokens they use."""
    kept, used = [], 0
    for text in texts:
        cost = min(count_tokens(text), block_tokens) + 1
        if used + cost <= budget:
            kept.append(text)
            used += cost
    return kept, used


def probes(triples: Sequence[Triple], texts: Sequence[str], count: int, seed: int) -> list[Probe]:
    """Up to ``count`` trained facts whose subject and relation lead to one object in the collection."""
    trained = set(texts)
    objects: dict[tuple[str, str], set[str]] = {}
    for t in triples:
        objects.setdefault((t.subject, t.relation_text), set()).add(t.object)
    single = [
        Probe(f"{t.subject} {t.relation_text}", t.object)
        for t in triples
        if len(objects[(t.subject, t.relation_text)]) == 1 and verbalise(t) in trained
    ]
    single = list({p.fragment: p for p in single}.values())
    random.Random(seed).shuffle(single)
    return single[:count]


def epoch_tokens(texts: Sequence[str], settings: CPTSettings, count_tokens: Callable[[str], int]) -> int:
    """The tokens an epoch trains on, counted as ``training_texts`` counts them."""
    return sum(min(count_tokens(text), settings.block_tokens) + 1 for text in texts)


def cpu_epoch_seconds(
    texts: Sequence[str], settings: CPTSettings, count_tokens: Callable[[str], int]
) -> float:
    """About how long one epoch (its probes included) takes on this machine's CPU cores, from the
    rate measured with the bundled model (``CPU_TOKENS_PER_CORE_SECOND``): for a CPU-only build to
    say what training would cost before it spends it."""
    return epoch_tokens(texts, settings, count_tokens) / (CPU_TOKENS_PER_CORE_SECOND * available_cores())


def adapter_key(texts: Sequence[str], settings: CPTSettings, source: BaseModelSource) -> str:
    """The adapter's identity: its training texts, the settings that shape it, and the base model."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8") + b"\x1e")
    digest.update(json.dumps(settings.key_fields(), sort_keys=True).encode("utf-8"))
    digest.update(f"{source.label}\x1f{source.size_bytes}".encode())
    return digest.hexdigest()[:20]


def read_training(folder: Path) -> Training | None:
    """The training recorded with a stored adapter; ``None`` when ``folder`` holds no whole adapter."""
    recorded = folder / TRAINING_FILE
    if not recorded.is_file():
        return None
    return Training(**json.loads(recorded.read_text(encoding="utf-8")))


def train_adapter(
    texts: Sequence[str],
    settings: CPTSettings,
    source: BaseModelSource,
    destination: Path,
    asked: Sequence[Probe] = (),
    log: Callable[[str], None] = lambda _: None,
    on_batch: Callable[[int, int, int], None] = lambda done, total, epoch: None,
) -> Training:
    """LoRA on ``texts`` (each one training sequence, ended by the end-of-text token), saved in
    ``destination`` with its record; probes asked before training and after each epoch. Written
    to a temporary folder first: a failed or diverged training leaves nothing at ``destination``.
    ``on_batch(done, total, epoch)`` hears of each optimiser step of all the epochs'."""
    if not texts:
        raise ValueError("nothing to train on")
    with no_library_notices():
        return _train(texts, settings, source, destination, asked, log, on_batch)


def _train(texts, settings, source, destination, asked, log, on_batch) -> Training:
    import torch
    from peft import LoraConfig, get_peft_model

    started = time.perf_counter()
    torch.manual_seed(settings.seed)
    base, tokenizer = load_base(source)
    parameters = sum(p.numel() for p in base.parameters())
    model = get_peft_model(
        base,
        LoraConfig(
            r=settings.rank,
            lora_alpha=settings.alpha,
            lora_dropout=settings.dropout,
            target_modules=list(TARGET_MODULES),
            task_type="CAUSAL_LM",
        ),
    )
    device = device_name()
    encoded = [
        tokenizer(text, truncation=True, max_length=settings.block_tokens - 1)["input_ids"]
        + [tokenizer.eos_token_id]
        for text in texts
    ]
    order = sorted(range(len(encoded)), key=lambda n: len(encoded[n]))  # little padding per batch
    batches = [order[n : n + settings.batch_size] for n in range(0, len(order), settings.batch_size)]
    optimiser = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=settings.learning_rate
    )
    shuffle = random.Random(settings.seed)
    accuracy = [_probe_accuracy(model, tokenizer, asked)] if asked else []
    losses, step, seen = [], 0, 0
    for epoch in range(1, settings.epochs + 1):
        model.train()
        shuffle.shuffle(batches)
        total, tokens = 0.0, 0
        for batch in batches:
            ids, mask = _padded([encoded[n] for n in batch], tokenizer.pad_token_id, device)
            labels = ids.masked_fill(mask == 0, -100)
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            step += 1
            if not math.isfinite(loss.item()):
                raise TrainingDiverged(step, epoch, loss.item())
            loss.backward()
            optimiser.step()
            optimiser.zero_grad()
            count = int(mask.sum())
            total, tokens = total + loss.item() * count, tokens + count
            on_batch(step, settings.epochs * len(batches), epoch)
        seen += tokens
        losses.append(round(total / tokens, 4))
        if asked:
            accuracy.append(_probe_accuracy(model, tokenizer, asked))
        log(
            f"epoch {epoch}/{settings.epochs}: loss {losses[-1]}"
            + (f", probes {accuracy[-1]:.2f}" if asked else "")
        )
    training = Training(
        base_model=source.label,
        base_parameters=parameters,
        device=device,
        epochs=settings.epochs,
        texts=len(texts),
        training_tokens=seen,
        seconds=round(time.perf_counter() - started, 1),
        epoch_losses=losses,
        probe_accuracy=accuracy,
    )
    _save(model, training, destination)
    return training


def _padded(rows: Sequence[list[int]], pad: int, device: str):
    import torch

    width = max(len(row) for row in rows)
    ids = torch.tensor([row + [pad] * (width - len(row)) for row in rows], device=device)
    mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in rows], device=device)
    return ids, mask


def _probe_accuracy(model, tokenizer, asked: Sequence[Probe]) -> float:
    """The share of probes whose greedy completion holds the trained object (short completions:
    an object is a few words)."""
    completed = CausalLM(model, tokenizer, "").complete([p.fragment for p in asked], [1] * len(asked), 24)
    hits = [exact_match(found[0] if found else "", p.gold) for p, found in zip(asked, completed, strict=True)]
    return round(sum(hits) / len(hits), 3)


def _save(model, training: Training, destination: Path) -> None:
    staging = destination.with_name(destination.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    with quiet():
        model.save_pretrained(str(staging))
    (staging / TRAINING_FILE).write_text(json.dumps(asdict(training), indent=1), encoding="utf-8")
    shutil.rmtree(destination, ignore_errors=True)
    staging.rename(destination)
