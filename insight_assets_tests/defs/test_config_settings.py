"""A step's config builds its method's core settings from the fields they share: the config holds
each setting once (default, bounds, description), and a value the settings refuse fails the step
with the reason, naming the asset."""

from __future__ import annotations

import dagster as dg
import pytest

from insight_assets.defs.insight_rag.answers import InsightRAGAnswersConfig
from insight_assets.defs.insightgen.assets import InsightGenInsightsConfig
from insight_assets.defs.xsum.assets import XSumAnswersConfig


def test_the_settings_take_the_configs_values_and_keep_their_own_defaults_for_the_rest():
    settings = XSumAnswersConfig(candidates=40, top_n=8, retrieval_scope="target").settings()
    assert (settings.candidates, settings.top_n, settings.retrieval_scope) == (40, 8, "target")
    # questions_per_paper is another asset's setting (xsum_questions): the settings' default stays.
    assert settings.questions_per_paper == type(settings)().questions_per_paper
    assert InsightRAGAnswersConfig(rag_ks=[1, 3]).settings().rag_ks == (1, 3)  # frozen settings hold tuples
    nested = InsightGenInsightsConfig(top_k=2, max_hops=1, methods=["insightgen"]).settings()
    assert (nested.selection.top_k, nested.selection.max_hops, nested.methods) == (2, 1, ("insightgen",))


def test_a_value_the_settings_refuse_fails_the_step_naming_the_asset():
    with pytest.raises(
        dg.Failure, match=r"Invalid xsum_answers config: top_n \(30\) cannot exceed candidates \(10\)"
    ):
        XSumAnswersConfig(candidates=10, top_n=30).settings()
    with pytest.raises(dg.Failure, match="Invalid insight_rag_answers config"):
        InsightRAGAnswersConfig(rag_mode="telepathy").settings()
