"""LLM-as-judge evaluation of insights (InsightGen §5.3, Appendices C and D), and judge agreement.

Criteria, each scored 0-5: *novelty* (new information or ideas beyond the answer), *diversity*
(distinct perspectives across a set), *relevance* (connection to the question and the asker's
intent) and *depth*. Depth is what §5.3 calls depth ("substantive rather than superficial") and
Appendix C calls *meaningfulness* ("actionable or informative content"); both name it here.

Two settings, both comparative, as in the paper:

- **set level** (``judge_sets``): one call per question shows every method's whole set; all four
  criteria.
- **insight level** (``judge_single_insights``): one call per repetition shows one insight per
  method, sampled with ``random.Random`` seeded by (seed, question, repetition); no diversity; ten
  repetitions per question, averaged (``average_repetitions``).

Positional bias is controlled as in Appendix D: the methods appear in an order shuffled per
(seed, question) (per repetition at insight level) under anonymous labels ("Method A", "Method
B", ...), so the judge never sees a method's name; the rows map labels back to methods. A row's
``overall`` is the mean of the criteria judged (four at set level, three at insight level): the
paper's judge gives one score "based on" the criteria, we ask for each and average them so that
every criterion stays visible.

Judges are configured, not built in: a judge is a name (``"offline"``, ``"gemini-2.5-flash"``...)
and the ``LLMClient`` that runs the judge tasks for it, so two judges are two clients.

**The offline judge** (the default provider) is a deterministic function of the texts. Its
embedding is TF-IDF: every insight of every method, the answer's sentences and the question are
TF-IDF vectors (``extractive.tfidf``) over their shared vocabulary, so the methods of one question
are measured in one space, and similarity is cosine. For a method with insights ``i``:

- novelty = 5 * (1 - mean_i max_a cos(i, a)) over the answer's sentences ``a`` (5 when the
  answer has no text): insights that repeat the answer score low;
- relevance = 5 * min(1, mean_i cos(i, question) / 0.3), a cosine of 0.3 counting as fully
  relevant (a question and a sentence share few words);
- diversity = 5 * (1 - mean pairwise cos(i, j)) over the set's insights (0 for a single insight:
  one insight is one perspective);
- depth = 5 * mean_i (0.5 * min(1, terms_i / 15) + 0.5 * min(1, new_i / 5)), where ``terms_i`` is
  the number of distinct content words of the insight and ``new_i`` of those in neither the
  question nor the answer: substance, and substance the answer lacks.

Its rationale states the measured numbers. It is a yardstick for pipelines and tests, not a
substitute for a model's judgement of usefulness.

**Agreement** between two judges (§6, RQ6) is measured on ``overall`` per question
(``judge_agreement``): pairwise ordering agreement and per-question Spearman rho.
"""

from .aggregation import average_repetitions, judge_agreement, mean_scores
from .offline import OfflineMeasures, judge_sets_offline, judge_single_offline, offline_measures
from .runs import (
    JudgedQuestion,
    JudgeOutcome,
    JudgeRequest,
    judge_questions,
    judge_sets,
    judge_single_insights,
    judged_questions,
    rows_from_judgement,
    set_request,
    single_insight_requests,
)
from .schemas import (
    CRITERIA_SET,
    CRITERIA_SINGLE,
    DEFAULT_REPETITIONS,
    JudgeRow,
    Level,
    MethodInsights,
    MethodScore,
    SetJudgement,
)
from .tasks import JUDGE_INSIGHT_SET, JUDGE_SINGLE_INSIGHTS, method_label, shuffled_methods

__all__ = [
    "CRITERIA_SET",
    "CRITERIA_SINGLE",
    "DEFAULT_REPETITIONS",
    "JUDGE_INSIGHT_SET",
    "JUDGE_SINGLE_INSIGHTS",
    "JudgeOutcome",
    "JudgeRequest",
    "JudgeRow",
    "JudgedQuestion",
    "Level",
    "MethodInsights",
    "MethodScore",
    "OfflineMeasures",
    "SetJudgement",
    "average_repetitions",
    "judge_agreement",
    "judge_questions",
    "judge_sets",
    "judge_sets_offline",
    "judge_single_insights",
    "judge_single_offline",
    "judged_questions",
    "mean_scores",
    "method_label",
    "offline_measures",
    "rows_from_judgement",
    "set_request",
    "shuffled_methods",
    "single_insight_requests",
]
