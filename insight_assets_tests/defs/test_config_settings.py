"""A stage's settings are one model: its asset's config is generated from it (each default, bound
and description written once), the method's own settings are built from it by name, and a value
the settings refuse, or a name that is not a setting, fails the step with the reason, naming the
asset."""

from __future__ import annotations

import dagster as dg
import pytest
from pydantic import ValidationError

from insight_assets.core.methods.insight_rag.settings import AnswersSettings as RAGAnswersSettings
from insight_assets.core.methods.insightgen.settings import InsightsSettings
from insight_assets.core.methods.xsum.settings import AnswersSettings
from insight_assets.core.methods.xsum.stages import STAGES as XSUM_STAGES
from insight_assets.defs.stage_assets import dagster_config, stage_settings


def test_the_method_settings_take_the_stage_settings_values():
    # XSum's engine reads its stage settings model itself: nothing is copied.
    settings = AnswersSettings(candidates=40, top_n=8, retrieval_scope="target")
    assert (settings.candidates, settings.top_n, settings.retrieval_scope) == (40, 8, "target")
    assert RAGAnswersSettings(rag_ks=[1, 3]).rag_ks == [1, 3]  # Insight-RAG's too
    insights = InsightsSettings(top_k=2, max_hops=1, methods=["insightgen"])
    assert (insights.top_k, insights.max_hops, insights.methods) == (2, 1, ["insightgen"])


def test_a_value_the_settings_refuse_or_a_misspelt_name_is_an_error():
    with pytest.raises(ValidationError, match=r"top_n \(30\) cannot exceed candidates \(10\)"):
        AnswersSettings(candidates=10, top_n=30)
    with pytest.raises(ValidationError, match="rag_mode must be one of"):
        RAGAnswersSettings(rag_mode="telepathy")
    with pytest.raises(ValidationError, match="candidate\n  Extra inputs are not permitted"):
        AnswersSettings(candidate=40)


def test_the_assets_config_is_the_settings_model_and_a_refused_value_fails_the_step_naming_it():
    answers = next(stage for stage in XSUM_STAGES if stage.name == "xsum_answers")
    config_class = dagster_config(answers.settings)
    assert set(config_class.model_fields) == set(AnswersSettings.model_fields)
    assert config_class.model_fields["top_n"].default == AnswersSettings().top_n
    assert stage_settings(answers, config_class(candidates=40, top_n=8)) == AnswersSettings(
        candidates=40, top_n=8
    )
    with pytest.raises(
        dg.Failure, match=r"Invalid xsum_answers config: .*top_n \(30\) cannot exceed candidates \(10\)"
    ):
        stage_settings(answers, config_class(candidates=10, top_n=30))


def test_the_parsing_config_is_the_quality_settings_model_plus_its_workers():
    from insight_assets.core.ingestion.text_quality import QualitySettings
    from insight_assets.defs.ingestion.assets import IngestionParsingConfig

    assert set(IngestionParsingConfig.model_fields) == set(QualitySettings.model_fields) | {"workers"}
    assert IngestionParsingConfig(poor_word_share=0.6).quality() == QualitySettings(poor_word_share=0.6)
    with pytest.raises(ValidationError, match="poor_word_share"):
        IngestionParsingConfig(poor_word_share=1.5)
