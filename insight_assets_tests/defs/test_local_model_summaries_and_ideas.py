"""XSum's summaries and SciPIP's ideas built by a real language model (see ``local_model.py``), on
two demo papers with small settings: every prompt, schema, repair and context budget of the two
methods through a generative model, every asset built, every cached answer holding to its task's
schema, and the rows naming the model that wrote them."""

from __future__ import annotations

import pytest

from insight_assets_tests.defs.local_model import (
    MODEL,
    SUMMARIES_AND_IDEAS,
    assert_answers_hold_to_their_schemas,
    build_with_local_model,
    writers,
)

pytestmark = pytest.mark.local_model


def test_summaries_and_ideas_build_with_the_bundled_local_model(
    instance, storage, hashing_embedder, tmp_path
):
    data = tmp_path / "data"
    build_with_local_model(instance, storage, hashing_embedder, data, SUMMARIES_AND_IDEAS)
    assert_answers_hold_to_their_schemas(data)
    assert writers(storage, "xsum_summaries") == {MODEL}
    assert writers(storage, "scipip_papers") == {MODEL}
