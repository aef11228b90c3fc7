"""SciPIP (Wang et al., 2025: "SciPIP: An LLM-based Scientific Paper Idea Proposer") with a
collection as its literature database.

§3.1: each paper is summarized into keywords, a one-sentence summary, a background (two
motivations), ideas (three details), a concise method and its references (``papers.py``); the
background and summary are embedded, and a paper-keyword graph is kept (``keywords.py``).
§3.2: SKC retrieval (semantics, keywords, co-citation) and the clustering filter
(``retrieval.py``), with the paper's TopK = 5, nCOCITE = 1, tau = 0.8 and nPapers = 10.
§3.3: dual-path idea generation (``ideas.py``) against each path alone, a direct prompt and an
AI-Scientist-style baseline (``ai_scientist.py``), every method's ideas expanded; judged on Table 1's
ratings short and expanded by one or more judges (``judging.py``), and pairwise against each
baseline in both orders (Fig. 4, ``pairwise.py``). Prompts name the collection's field
(``field.py``); tau and the keyword threshold are calibrated to the embedder (``calibration.py``). Evaluation offline: leave-one-out retrieval recall against
each paper's own in-collection references (``evaluation.py``).
"""

from __future__ import annotations

from . import store  # declares the method's warehouse tables
from .backgrounds import BACKGROUNDS_FILE, Background, read_backgrounds, research_backgrounds
from .evaluation import Query, RecallRow, leave_one_out, make_queries, recall_table, variant_rankings
from .ideas import IdeaRun, Paper, propose_ideas
from .judging import IdeaSet, JudgedIdea, good_shares, judge_agreement, judge_ideas
from .keywords import KeywordGraph
from .pairwise import judge_pairs, win_rates
from .papers import PaperParts, PaperSummary, paper_parts, summarize_papers
from .retrieval import Library, Retrieval, cluster, for_library, retrieve, round_robin
from .settings import IdeasSettings, RetrievalSettings
from .tasks import IDEA_TASKS, JUDGE_TASKS, SCIPIP_ENTITIES, SUMMARY_TASKS

__all__ = [
    "BACKGROUNDS_FILE",
    "IDEA_TASKS",
    "JUDGE_TASKS",
    "SCIPIP_ENTITIES",
    "SUMMARY_TASKS",
    "Background",
    "IdeaRun",
    "IdeaSet",
    "IdeasSettings",
    "JudgedIdea",
    "KeywordGraph",
    "Library",
    "Paper",
    "PaperParts",
    "PaperSummary",
    "Query",
    "RecallRow",
    "Retrieval",
    "RetrievalSettings",
    "cluster",
    "for_library",
    "good_shares",
    "judge_agreement",
    "judge_ideas",
    "judge_pairs",
    "leave_one_out",
    "make_queries",
    "paper_parts",
    "propose_ideas",
    "read_backgrounds",
    "recall_table",
    "research_backgrounds",
    "retrieve",
    "round_robin",
    "store",
    "summarize_papers",
    "variant_rankings",
    "win_rates",
]
