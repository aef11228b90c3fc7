"""SciPIP's constants (the paper's defaults, §4.1, and the issue's where the paper gives none) and
the outputs its tasks answer with."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

# §3.1 / Table 6: a paper's keywords are at most 5 noun phrases of 2 to 5 words.
MAX_KEYWORDS = 5
KEYWORD_MIN_WORDS = 2
KEYWORD_MAX_WORDS = 5
# Table 5: two motivations (the background) and three details (the ideas).
MOTIVATIONS = 2
DETAILS = 3

# §4.1: TopK = 5 semantic hits, nCOCITE = 1 co-cited paper per retrieved paper, tau = 0.8 on the
# summary embeddings (the public code clusters backgrounds at 0.95), nPapers = 10.
TOP_K = 5
N_COCITE = 1
TAU = 0.8
N_PAPERS = 10
# Appendix C names two keyword filters (co-occurrence too rare, terms too common) without values;
# for collections of 10-20 papers: a neighbour must co-occur with the keyword in >= 2 papers, and
# the 10 rarest neighbours are kept.
NEIGHBOUR_MIN_PAPERS = 2
NEIGHBOUR_KEEP = 10

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


class PaperDigest(BaseModel):
    """Table 5: the one-sentence summary, the two motivations (the background) and the three
    details (the ideas) of a paper, from its title, abstract and introduction."""

    summary: str = Field(
        description='One sentence: "The problem of [problem] can be addressed by [approach]."'
    )
    motivations: list[str] = Field(description="The two most critical motivations behind the methods.")
    details: list[str] = Field(
        description="The three most critical or innovative details not in the summary."
    )


class Entities(BaseModel):
    """Table 6: up to 5 key entities, nouns or noun phrases of 2 to 5 words."""

    entities: list[str]

    @field_validator("entities")
    @classmethod
    def _strip(cls, value: list[str]) -> list[str]:
        return [entity.strip() for entity in value if entity.strip()]


class ConciseMethod(BaseModel):
    """Table 7: the method section rewritten in the style of a summarized method."""

    method: str
