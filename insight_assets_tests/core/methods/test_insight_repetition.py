"""``insights_do_not_repeat_the_answer``: an insight restating one sentence of a long answer is
caught with the bundled embedder; insights that add to the answer are not."""

from __future__ import annotations

import pytest

from insight_assets.core.embedding.models import LocalEmbedder
from insight_assets.core.methods.insightgen.repetition import REPEATS_ANSWER_COSINE, repeating_insights

ANSWER = (
    "Large language models are expensive to serve because their weights occupy hundreds of gigabytes. "
    "To move towards a more consistent and efficient human evaluation, we present LONGEVAL, a set of "
    "guidelines for human evaluation of faithfulness in long-form summarization. "
    "Post-training quantization reduces the memory footprint without retraining the model. "
    "Activation outliers make activation quantization difficult because a few channels are very large."
)
ADDITIONS = [
    (
        "Cost trade-off: annotating faithfulness with fine-grained units took annotators twice as long as "
        "scoring whole summaries."
    ),
    "In practice: 4-bit kernels achieve a 3x speedup over half precision on desktop and mobile GPUs.",
]


@pytest.fixture(scope="module")
def embed():
    return LocalEmbedder(precision="fp32").embed


def test_an_insight_restating_one_sentence_of_a_long_answer_is_caught(embed):
    copied = "Not in the answer: Post-training quantization reduces memory without retraining the model."
    # The demo's offline insight that rewords the answer's second sentence (0.84 to it, 0.76 to the answer).
    reworded = (
        "Not in the answer: high inter-annotator agreement: Motivated by our survey, we present LONGEVAL, "
        "a set of guidelines for human evaluation of faithfulness in long-form summaries that addresses "
        "the following challenges: (1) How can we achieve high inter-annotator agreement on faithfulness scores?"
    )
    insights = [("q", text) for text in [ADDITIONS[0], copied, ADDITIONS[1], reworded]]

    found = repeating_insights(embed, insights, {"q": ANSWER})

    assert [r.index for r in found] == [1, 3]
    assert found[0].sentence.startswith("Post-training quantization")
    assert found[1].sentence.startswith("To move towards") and found[1].cosine >= REPEATS_ANSWER_COSINE


def test_insights_that_add_to_the_answer_pass(embed):
    assert repeating_insights(embed, [("q", text) for text in ADDITIONS], {"q": ANSWER}) == []
    assert repeating_insights(embed, [], {"q": ANSWER}) == []
