"""SciPIP's constants (the paper's defaults, §4.1, and the issue's where the paper gives none) and
the outputs its tasks answer with."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from insight_assets.core.startup.lazy import LazyModel

# §3.1 / Table 6: a paper's keywords are at most 5 noun phrases of 2 to 5 words.
MAX_KEYWORDS = 5
KEYWORD_MIN_WORDS = 2
KEYWORD_MAX_WORDS = 5
# Table 5: two motivations (the background) and three details (the ideas).
MOTIVATIONS = 2
DETAILS = 3

# §4.1: TopK = 5 semantic hits, nCOCITE = 1 co-cited paper per retrieved paper, tau = 0.8 on the
# summary embeddings of jina-embeddings-v3 (the public code clusters backgrounds at 0.95; here tau
# is calibrated to the embedder unless set, see ``calibration``), nPapers = 10. Appendix C's
# keyword filters (m, n) have no values in the paper: they come from the collection
# (``keywords.filter_values``).
TOP_K = 5
N_COCITE = 1
TAU = 0.8
N_PAPERS = 10

# Which route found a retrieved paper (§3.2).
SEMANTIC = "semantic"
KEYWORD = "keyword"
COCITE = "co-citation"
ROUTES = (SEMANTIC, KEYWORD, COCITE)

# The retrieval variants the leave-one-out recall compares.
SEMANTIC_ONLY = "semantic-only"
KEYWORD_ONLY = "keyword-only"
SKC = "skc"
SKC_FILTERED = "skc+filter"
VARIANTS = (SEMANTIC_ONLY, KEYWORD_ONLY, SKC, SKC_FILTERED)

# Vector profiles of a paper's summary parts in LanceDB.
BACKGROUND = "background"
SUMMARY = "summary"

TEMPERATURE = 0.0
# The paper gives no sampling settings for idea generation; ideas are meant to vary, so they are
# sampled (configurable per task); summaries, selection and judging stay at 0.
IDEA_TEMPERATURE = 0.7


class PaperDigest(LazyModel):
    """Table 5: the one-sentence summary, the two motivations (the background) and the three
    details (the ideas) of a paper, from its title, abstract and introduction."""

    summary: str = Field(
        description='One sentence: "The problem of [problem] can be addressed by [approach]."'
    )
    motivations: list[str] = Field(description="The two most critical motivations behind the methods.")
    details: list[str] = Field(
        description="The three most critical or innovative details not in the summary."
    )


class Entities(LazyModel):
    """Table 6: up to 5 key entities, nouns or noun phrases of 2 to 5 words."""

    entities: list[str]

    @field_validator("entities")
    @classmethod
    def _strip(cls, value: list[str]) -> list[str]:
        return [entity.strip() for entity in value if entity.strip()]


class ConciseMethod(LazyModel):
    """Table 7: the method section rewritten in the style of a summarized method."""

    method: str


# -- idea generation (§3.3) --------------------------------------------------------------------------

# §3.3.1: the brainstorm proposes 3 to 4 ideas (Table 9's prompt says 4 to 6; the text and the issue
# say 3 to 4); Table 10's initial ideas 3 to 4; integration keeps about 5 (Table 11: 5 to 6).
BRAINSTORM_IDEAS = 4
INITIAL_IDEAS = 4
INTEGRATED_IDEAS = 5
# The ideas compared (Table 2): SciPIP's dual path, each path alone, and one direct prompt.
DUAL = "scipip"
BRAINSTORM_ONLY = "brainstorm-only"
RETRIEVAL_ONLY = "retrieval-only"
DIRECT = "direct"
# The AI Scientist's idea stage (Lu et al., 2024) on the same background: Fig. 4's baseline.
AI_SCIENTIST = "ai-scientist"
IDEA_METHODS = (DUAL, BRAINSTORM_ONLY, RETRIEVAL_ONLY, DIRECT, AI_SCIENTIST)
BASELINES = tuple(m for m in IDEA_METHODS if m != DUAL)
# The AI Scientist's launch script reflects three times on each idea (NUM_REFLECTIONS = 3).
AI_SCIENTIST_REFLECTIONS = 3
# Table 1: four ratings 0-5 and a yes/no; Table 2 reports the share rated >= 4.
RATINGS = ("novelty", "clarity", "feasibility", "relevance")
# Fig. 4's pairwise criteria: Table 1's, helpfulness included.
PAIR_CRITERIA = (*RATINGS, "helpfulness")
# What the judge reads of an idea: its short form, or its expansion (problem, method, outcome).
SHORT = "short"
EXPANDED = "expanded"
GOOD_RATING = 4
OFFLINE_TEMPLATE = "[offline template]"


class TransformedBackground(LazyModel):
    """Table 8: the background explained in detail, its technical terms defined."""

    background: str


class Idea(LazyModel):
    title: str
    idea: str
    inspired_by: list[str] = Field(default_factory=list, description="Titles of the papers that inspired it.")


class IdeaList(LazyModel):
    ideas: list[Idea]


class Inspiration(LazyModel):
    """What one retrieved paper's method offers the background, or that it offers nothing."""

    useful: bool
    inspiration: str = ""


class Selection(LazyModel):
    """Table 11: the numbers of the ideas kept, unmodified."""

    selected: list[int]


class DetailedIdea(LazyModel):
    """Table 12: an idea expanded into a concrete method."""

    problem: str
    method: str
    expected_outcome: str


class IdeaRating(LazyModel):
    idea: int
    novelty: int = Field(ge=0, le=5)
    clarity: int = Field(ge=0, le=5)
    feasibility: int = Field(ge=0, le=5)
    relevance: int = Field(ge=0, le=5)
    helpful: bool
    rationale: str = ""


class IdeaRatings(LazyModel):
    ratings: list[IdeaRating]


class ScientistIdea(LazyModel):
    """The AI Scientist's idea JSON (its Name, Title, Experiment and self-ratings 1-10)."""

    name: str
    title: str
    experiment: str
    interestingness: int = Field(ge=1, le=10)
    feasibility: int = Field(ge=1, le=10)
    novelty: int = Field(ge=1, le=10)


class ScientistDraft(LazyModel):
    """One round of the AI Scientist's idea generation or reflection: its thought and the idea;
    ``done`` when reflection found nothing to improve (its "I am done")."""

    thought: str
    idea: ScientistIdea
    done: bool = False


class NoveltyDecision(LazyModel):
    """The AI Scientist's novelty check: novel or not, given the most related papers."""

    novel: bool
    reason: str


Preference = Literal["A", "B", "tie"]


class PairVerdict(LazyModel):
    """Fig. 4: which of two ideas is better on each criterion, or a tie."""

    novelty: Preference
    clarity: Preference
    feasibility: Preference
    relevance: Preference
    helpfulness: Preference
    rationale: str = ""
