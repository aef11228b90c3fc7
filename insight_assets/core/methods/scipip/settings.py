"""SciPIP's settings, one model per stage, which the engine reads itself (§3.2 and §4.1's retrieval
values, §3.3's ideas, Table 1 and Fig. 4's judging). Values left unset in ``RetrievalSettings`` are
derived from the collection (``retrieval.for_library``)."""

from __future__ import annotations

from pydantic import Field

from insight_assets.core.runtime.stage_settings import JudgedSettings, JudgeModel, StageSettings

from .schemas import AI_SCIENTIST_REFLECTIONS, INTEGRATED_IDEAS, N_COCITE, N_PAPERS, TOP_K


class SummariesSettings(StageSettings):
    """§3.1, Tables 5-7: each paper's summary, background, ideas, keywords and concise method."""


class RetrievalSettings(StageSettings):
    """§3.2 and §4.1's values. Unset, tau is calibrated to the embedder (the paper's 0.8 is for
    jina-embeddings-v3) and the keyword filter's m and n (which the paper does not give) come from
    the collection's keyword statistics. The ideas retrieve with these too."""

    top_k: int = Field(default=TOP_K, ge=1, description="Semantic hits (TopK).")
    n_cocite: int = Field(default=N_COCITE, ge=0, description="Co-cited papers per paper (nCOCITE).")
    tau: float | None = Field(
        default=None,
        ge=-1.0,
        le=1.0,
        description="Summary cosine that merges two papers' clusters; unset: calibrated to the embedder "
        "(set 0.8 for the paper's value on jina-embeddings-v3).",
    )
    n_papers: int = Field(default=N_PAPERS, ge=1, description="Papers kept after the filter (nPapers).")
    neighbour_min_papers: int | None = Field(
        default=None,
        ge=1,
        description="Papers a neighbour keyword must share (m); unset: from the collection.",
    )
    neighbour_keep: int | None = Field(
        default=None, ge=0, description="Rarest neighbour keywords kept (n); unset: from the collection."
    )
    leave_one_out: bool = Field(
        default=True, description="Also query with every paper's own background, the paper held out."
    )


class IdeasSettings(StageSettings):
    """§3.3's dual path, each path alone and the direct baseline; retrieval as `scipip_retrievals`
    was built."""

    max_backgrounds: int | None = Field(
        default=None,
        ge=1,
        description="Backgrounds to propose ideas for, at most: the user's first, then papers' own (held "
        "out); unset: every one, so that a paper added to the collection brings its own background's "
        "ideas and pushes no other background's out.",
    )
    field: str | None = Field(
        default=None,
        description="The research field the prompts name; unset: inferred from the papers' summaries.",
    )
    ai_scientist_ideas: int = Field(
        default=INTEGRATED_IDEAS,
        ge=0,
        description="Ideas per background of the AI-Scientist-style baseline (0: no such baseline).",
    )
    ai_scientist_reflections: int = Field(
        default=AI_SCIENTIST_REFLECTIONS,
        ge=0,
        description="Self-reflection rounds per AI Scientist idea (its launch script's 3).",
    )


class ScoresSettings(JudgedSettings):
    """Table 1's ratings of the short and the expanded ideas, and Fig. 4's pairwise judgements, by
    one or more judges (each may be another model); the seed of the shown order."""

    seed: int = Field(default=13, description="Seed of the order ideas are shown to the judge in.")
    judges: list[JudgeModel] = Field(
        default=[],
        description="Judges to run (agreement is reported between them); empty: one, from judge_provider/judge_model.",
    )
    expanded_per_call: int = Field(
        default=5, ge=1, description="Expanded ideas shown to the judge per call (they are long)."
    )
    pairwise: bool = Field(default=True, description="Judge SciPIP against each baseline pairwise (Fig. 4).")

    def panel(self) -> list[JudgeModel]:
        return list(self.judges) or super().panel()
