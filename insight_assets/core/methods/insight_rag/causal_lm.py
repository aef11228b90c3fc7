"""The insight retriever's language model, read by ``transformers``: the base model (the bundled
SmolLM2-135M GGUF by default, or any Hugging Face model directory or GGUF file), with or without a
LoRA adapter, completing fragments greedily: once (one insight), or from each of the most likely
first tokens (several).

A GGUF file is dequantised to float32 by transformers (the bundled one: 134.5 M parameters, about
40 s on 2 CPU cores), once per machine: the result is saved as a Hugging Face model directory under
``model_cache_dir()`` and read from there afterwards (about 1 s). A loaded base model is kept for the
process, since training, the accuracy table and the answers each read it. A CUDA device is used when
there is one.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...llm.errors import ConfigurationError
from ...llm.gguf import bundled_model, model_file

# Fragments completed at once: one greedy sequence each, or several branches each.
BRANCH_BATCH = 4
GREEDY_BATCH = 16
SENTENCE_ENDS = (". ", "\n")


@dataclass(frozen=True)
class BaseModelSource:
    """Where a base model is read from: a Hugging Face model directory, or a GGUF file in ``folder``."""

    folder: Path
    gguf_file: str | None
    label: str  # what reports call it: the file or directory name
    size_bytes: int  # part of the adapter's key: another model of the same name trains again


def base_model_source(base_model: str | None) -> BaseModelSource:
    """``base_model`` checked (``None``: the bundled SmolLM2-135M GGUF); raises ``ConfigurationError``
    naming the path before anything is loaded or trained."""
    if base_model is None:
        path = bundled_model()
        return BaseModelSource(path.parent, path.name, path.name.removesuffix(".gguf"), path.stat().st_size)
    path = Path(base_model).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ConfigurationError(
                f"base model {str(path)!r} is a directory without config.json: give a Hugging Face model "
                "directory (config.json, weights, tokenizer) or a .gguf file"
            )
        weights = [p for p in path.iterdir() if p.suffix in (".safetensors", ".bin")]
        if not weights:
            raise ConfigurationError(
                f"base model directory {str(path)!r} holds no .safetensors or .bin weights"
            )
        return BaseModelSource(path.resolve(), None, path.name, sum(p.stat().st_size for p in weights))
    if not path.exists():
        raise ConfigurationError(
            f"base model {str(path)!r} does not exist: give a Hugging Face model directory or a .gguf "
            "file, or leave base_model unset for the bundled SmolLM2-135M"
        )
    checked = model_file(str(path))  # the GGUF header check, with its own clear errors
    return BaseModelSource(
        checked.parent, checked.name, checked.name.removesuffix(".gguf"), checked.stat().st_size
    )


@contextlib.contextmanager
def no_library_notices() -> Iterator[None]:
    """Inside: no warnings from transformers or peft (deprecations of their own internals, a missing
    config beside a GGUF file): nothing a user can act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"(transformers|peft)(\.|$)")
        yield


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """``no_library_notices`` and no progress bar (the GGUF dequantisation's), for loading and saving."""
    with no_library_notices(), contextlib.redirect_stderr(io.StringIO()):
        yield


def device_name() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def model_cache_dir() -> Path:
    """Where dequantised GGUF base models are kept: ``INSIGHT_ASSETS_MODEL_CACHE``, else
    ``$XDG_CACHE_HOME/insight_assets/base_models`` (``~/.cache/...``)."""
    chosen = os.environ.get("INSIGHT_ASSETS_MODEL_CACHE")
    if chosen:
        return Path(chosen).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "insight_assets" / "base_models"


def _dequantised_copy(source: BaseModelSource) -> Path:
    """The Hugging Face directory a GGUF base model is saved to once dequantised: keyed like the
    adapters by its name and size, and by the transformers version that wrote it."""
    import transformers

    return model_cache_dir() / f"{source.label}-{source.size_bytes}-transformers-{transformers.__version__}"


def _read(folder: Path, gguf_file: str | None, label: str):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    extra = {"gguf_file": gguf_file} if gguf_file else {}
    try:
        with quiet():
            tokenizer = AutoTokenizer.from_pretrained(str(folder), **extra)
            model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32, **extra)
    except (OSError, ValueError, RuntimeError, KeyError) as error:
        raise ConfigurationError(
            f"base model {label!r} could not be read by transformers ({error}); the GGUF "
            "architectures it reads are llama, mistral, qwen2, gemma and a few more"
        ) from None
    return model, tokenizer


def _save(model, tokenizer, destination: Path) -> None:
    """Save into a temporary folder beside ``destination``, then rename it there: a reader never
    sees half a model, and of two processes saving at once one wins. A cache that cannot be written
    (a read-only home) only costs the next process the dequantisation again."""
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=".saving-", dir=destination.parent))
        # transformers marks a model read from a GGUF as quantised and refuses to save it, though
        # its weights are plain float32 by then: the mark goes, and the copy is an ordinary model.
        model.hf_quantizer = None
        model.is_quantized = False
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        with quiet():
            model.save_pretrained(partial)
            tokenizer.save_pretrained(partial)
        partial.rename(destination)
    except OSError:
        if "partial" in locals():
            shutil.rmtree(partial, ignore_errors=True)


@functools.lru_cache(maxsize=1)
def _load(source: BaseModelSource):
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    if source.gguf_file is None:
        model, tokenizer = _read(source.folder, None, source.label)
    else:
        saved = _dequantised_copy(source)
        if (saved / "config.json").is_file():
            model, tokenizer = _read(saved, None, source.label)
        else:
            model, tokenizer = _read(source.folder, source.gguf_file, source.label)
            _save(model, tokenizer, saved)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"  # generation continues each fragment from its last token
    return model.to(device_name()).eval(), tokenizer


def load_base(source: BaseModelSource):
    """A fresh copy of the base model (training wraps and changes it) and its tokenizer."""
    model, tokenizer = _load(source)
    return copy.deepcopy(model), tokenizer


class CausalLM:
    """A base model, optionally with a LoRA adapter, that completes fragments."""

    def __init__(self, model, tokenizer, label: str):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.label = label

    @classmethod
    def open(cls, source: BaseModelSource, adapter: Path | None = None) -> CausalLM:
        """The base model, with the adapter saved in ``adapter`` when given."""
        model, tokenizer = _load(source)
        if adapter is None:
            return cls(model, tokenizer, source.label)
        from peft import PeftModel

        with quiet():
            adapted = PeftModel.from_pretrained(copy.deepcopy(model), str(adapter))
            # Folded into the weights: generation then costs what the base model's does.
            merged = adapted.merge_and_unload()
        return cls(merged, tokenizer, f"{source.label} + LoRA")

    def complete(
        self, fragments: Sequence[str], returns: Sequence[int], max_new_tokens: int
    ) -> list[list[str]]:
        """For each fragment, ``returns[i]`` completions (the fragment, then the generated text to the
        end of its first sentence, at most ``max_new_tokens``): greedy for one; for several, greedy from
        each of the most likely first tokens (distinct by construction, and cheaper than beam search,
        which runs every beam to its end)."""
        out: list[list[str]] = [[] for _ in fragments]
        for width, batch in ((1, GREEDY_BATCH), *((n, BRANCH_BATCH) for n in sorted(set(returns) - {1}))):
            chosen = [n for n, count in enumerate(returns) if count == width]
            for start in range(0, len(chosen), batch):
                positions = chosen[start : start + batch]
                texts = self._generate([fragments[n] for n in positions], width, max_new_tokens)
                for position, found in zip(positions, texts, strict=True):
                    out[position] = [f"{fragments[position].strip()} {text}".strip() for text in found]
        return out

    def _generate(self, fragments: Sequence[str], width: int, max_new_tokens: int) -> list[list[str]]:
        import torch

        inputs = self.tokenizer([f.strip() for f in fragments], return_tensors="pt", padding=True)
        ids, mask = inputs["input_ids"].to(self.model.device), inputs["attention_mask"].to(self.model.device)
        prompt_length = ids.shape[1]
        with torch.no_grad():
            if width > 1:
                firsts = self.model(input_ids=ids, attention_mask=mask).logits[:, -1, :].topk(width).indices
                ids = torch.cat([ids.repeat_interleave(width, 0), firsts.reshape(-1, 1)], dim=1)
                mask = torch.cat(
                    [mask.repeat_interleave(width, 0), torch.ones_like(firsts.reshape(-1, 1))], dim=1
                )
            generated = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=max_new_tokens - (width > 1),
                do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id,
                # An insight is one sentence (a triple is trained as one): stop a sequence there,
                # rather than writing the rest of the 100 tokens for nothing.
                stop_strings=list(SENTENCE_ENDS),
                tokenizer=self.tokenizer,
            )
        new = generated[:, prompt_length:]
        texts = [first_sentence(self.tokenizer.decode(row, skip_special_tokens=True)) for row in new]
        return [list(dict.fromkeys(texts[n * width : (n + 1) * width])) for n in range(len(fragments))]


def first_sentence(text: str) -> str:
    """``text`` up to its first line break or sentence end (a full stop followed by a space)."""
    line = text.strip().split("\n")[0]
    end = line.find(". ")
    return (line[: end + 1] if end >= 0 else line).strip()
