"""Vector helpers every stage shares."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, DTypeLike


def normalize_rows(vectors: ArrayLike, dtype: DTypeLike | None = np.float32) -> np.ndarray:
    """``vectors`` with each row (each vector along the last axis) scaled to unit length; a row of
    zeros stays zeros. Converted to ``dtype`` first; ``None`` keeps the input's (float64 TF-IDF
    matrices stay float64)."""
    array = np.asarray(vectors, dtype=dtype)
    return array / np.maximum(np.linalg.norm(array, axis=-1, keepdims=True), 1e-12)
