"""What a paper states it leaves open: its limitations, open problems and future work, found from
the wording of its sentences ("we leave X to future work", "it remains unclear whether",
"our study is limited to").

Offline, these statements are what compression keeps among a paper's conclusions and what the
offline question generator asks about: a researcher reading several papers asks how one paper's
work bears on another's stated open problem.
"""

from __future__ import annotations

import re

from insight_assets.core.startup.lazy import lazy_regex

from ..text import without_citation_markers

_OPEN_PROBLEM = lazy_regex(
    r"\bfuture (work|research|directions?|studies)\b"
    r"|\bremains? (an? |largely |still )?(open|unclear|unknown|unexplored|under-?explored|unsolved|challenging)\b"
    r"|\bopen (research )?(questions?|problems?|challenges?)\b(?! answering)"
    r"|\b(a|one|the|main|key|major|important) limitations? (of|is|in)\b"
    r"|\b(study|work|paper|approach|method|model|analysis|evaluation) (is|was|are|were) (limited|restricted) to\b"
    r"|\bwe (did|do) not (investigate|explore|address|consider|study|evaluate|examine|experiment)\b"
    r"|\bbeyond the scope of (this|our|the present) (work|paper|study)\b"
    r"|\bwe (plan|intend) to\b"
    r"|\bwe (hope|would like) to (further )?(explore|investigate|study|extend|examine|apply|understand)\b"
    r"|\bit (is|remains) (still )?unclear\b",
    re.IGNORECASE,
)
# Wordings that carry a cue without stating an open problem of the work.
_NOT_AN_OPEN_PROBLEM = lazy_regex(
    r"\b(due to|because of) (space|page|practical|time)\b|\bspace limitations?\b|\bin this section\b"
    r"|^(limitations?|future work)\s*[:.]|^unlike\b"
    # Releases "for future research", and sentences that announce rather than state ("as follows").
    r"|\b(for|facilitate|help|support|enable|inspires?) (future|further) (work|research)"
    r"|•|\bas follows\b|\bfollowing aspects\b|\bsections? \d|§|\brest of (our|this|the) paper\b|:$",
    re.IGNORECASE,
)
# Discourse openers a quoted statement does without ("However, it remains unclear ...").
_OPENER = lazy_regex(
    r"^(however|finally|moreover|furthermore|additionally|also|thus|therefore|still|yet|nevertheless|"
    r"in addition|as future work|for future work|in future work|in (the )?future|in summary|overall)\s*,?\s+",
    re.IGNORECASE,
)


# A quoted statement this short fits a question of InsightGen's 35 words beside two short titles.
SHORT_QUOTE_WORDS = 20
# A main clause after a leading subordinate one: ", it is unclear", ", we leave".
_MAIN_CLAUSE = lazy_regex(r"(?<=, )(?:it|we|this|there|these|such|our)\b", re.IGNORECASE)


# Words of a main clause that point back into the clause before it ("..., it is unclear why they fail").
_BACK_REFERENCE = lazy_regex(r"\b(they|them|their|these|those)\b", re.IGNORECASE)


def is_open_problem(sentence: str) -> bool:
    """Whether the sentence states a limitation, an open problem or future work."""
    return bool(_OPEN_PROBLEM.search(sentence)) and not _NOT_AN_OPEN_PROBLEM.search(sentence.strip())


def quotable(sentence: str) -> str:
    """The sentence as a question may quote it: its clause that states the open problem (of those
    a semicolon separates; from a main clause that opens after a comma, "While X, it remains
    unclear ..."), without a discourse opener or citations, capitalised, ending in a full stop."""
    clauses = without_citation_markers(sentence).split(";")
    text = " ".join(next((clause for clause in clauses if _OPEN_PROBLEM.search(clause)), sentence).split())
    main = _MAIN_CLAUSE.search(text)
    if (
        main
        and _OPEN_PROBLEM.search(text[main.start() :])
        and not _BACK_REFERENCE.search(text[main.start() :])
    ):
        text = text[main.start() :]
    text = _OPENER.sub("", text).rstrip(" .;:")
    return text[:1].upper() + text[1:] + "." if text else ""
