"""The two question tasks: ``generate_questions`` and ``refine_questions``.

Offline, generation asks about what the papers themselves state they leave open (``open_problems.py``):
a question quotes one paper's stated limitation, open question or future work and asks how another
paper of the combination (or two) bears on it; papers that state none are asked about by what one
paper's findings mean for another's proposal. The questions are templates around the papers' own
words and titles, not a model's questions. Offline refinement writes nothing either: it keeps the
candidates that touch the most papers' titles and topics, preferring ones unlike those already
kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from insight_assets.core.startup.lazy import LazyModel

from ..extractive import terms
from ..llm.tasks import Task, narrowed, question_shape, register_task
from .open_problems import is_open_problem, quotable
from .records import rendered_statements, word_count

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class Paper(LazyModel):
    """A compressed paper as the question and answer tasks receive it."""

    title: str
    text: str = ""
    main_topics: list[str] = Field(default_factory=list)


def papers_of(papers: Sequence[Any]) -> list[Paper]:
    return [Paper.model_validate(paper) for paper in papers]


def format_papers(papers: Sequence[Paper]) -> str:
    # The compressed text opens with "Title: ...", so the title is not repeated here.
    return "\n\n".join(f"[Paper {number}]\n{paper.text}" for number, paper in enumerate(papers, 1))


# -- generate_questions -------------------------------------------------------------------------


class GeneratedQuestions(LazyModel):
    # May be empty: offline, no question may fit tight word limits.
    questions: list[Text] = Field(description="The candidate questions.")


# {a}: the paper whose stated open problem ({problem}) is quoted; {b}, {c}: other papers of the
# combination. A combination of one paper (a one-paper collection) cannot span papers.
_PROBLEM_TEMPLATES = (
    '"{a}" leaves open: ‘{problem}’ How could "{b}" help address it?',
    '"{a}" leaves open: ‘{problem}’ What do "{b}" and "{c}" offer toward it?',
)
_SINGLE_PROBLEM_TEMPLATES = ('"{a}" leaves open: ‘{problem}’ What would it take to address it?',)
# When the papers' stated open problems give fewer questions than asked for.
_PAIR_TEMPLATES = (
    'Which findings of "{b}" bear on what "{a}" proposes, and which of its assumptions would they '
    + "challenge?",
    'What limitations of "{a}" does "{b}" make visible, and how could the two approaches be combined?',
)
_SINGLE_TEMPLATES = (
    'What does "{a}" leave open, and which of its assumptions would a follow-up study have to test?',
)
_SHORT_TITLE_WORDS = 5


def title_forms(title: str) -> list[str]:
    """The title, then shorter forms of it: the part before a colon, then its first words."""
    forms = [title]
    head = title.split(":", 1)[0].strip()
    if head and head != title:
        forms.append(head)
    words = title.split()
    if len(words) > _SHORT_TITLE_WORDS:
        forms.append(" ".join(words[:_SHORT_TITLE_WORDS]) + "…")
    return forms


def names_paper(text: str, title: str) -> bool:
    """Whether ``text`` names the paper titled ``title`` by a form of its title in double quotes."""
    return any(f'"{form}"' in text for form in title_forms(title))


def _fill(template: str, titles: Sequence[list[str]], problem: str, low: int, high: int) -> str | None:
    """The template filled with the longest title forms that keep it within [low, high] words."""
    for level in range(max(len(forms) for forms in titles)):
        a, b, c = (forms[min(level, len(forms) - 1)] for forms in titles)
        question = template.format(a=a, b=b, c=c, problem=problem)
        if word_count(question) <= high:
            return question if word_count(question) >= low else None
    return None


def stated_open_problems(paper: Paper) -> list[str]:
    """The open problems (limitations, future work) among a compressed paper's statements, as a
    question quotes them."""
    return [
        quotable(statement) for statement in rendered_statements(paper.text) if is_open_problem(statement)
    ]


def _drafts(size: int, problems: list[list[str]]) -> Iterator[tuple[str, tuple[int, int, int], str]]:
    """(template, papers a, b, c, quoted problem) in the order questions are drafted: each paper's
    stated problems in turn, asked of each other paper, then pairs of papers (what one found, what
    the other proposes)."""
    others = [[k for k in range(size) if k != i] or [i] for i in range(size)]
    stated: list[tuple[int, str]] = []  # each paper's first problem, then each one's second, ...
    for rank in range(max(map(len, problems), default=0)):
        stated.extend((i, found[rank]) for i, found in enumerate(problems) if rank < len(found))
    templates = _PROBLEM_TEMPLATES if size > 1 else _SINGLE_PROBLEM_TEMPLATES
    for turn in range(max(1, size - 1)):
        for n, (a, problem) in enumerate(stated):
            b = others[a][(n + turn) % len(others[a])]
            c = others[a][(n + turn + 1) % len(others[a])]
            yield templates[(n + turn) % len(templates)], (a, b, c), problem
    templates = _PAIR_TEMPLATES if size > 1 else _SINGLE_TEMPLATES
    for turn in range(max(1, size - 1)):
        for shift in range(len(templates)):
            for a in range(size):
                b = others[a][turn % len(others[a])]
                yield templates[(a + turn + shift) % len(templates)], (a, b, b), ""


def generate_offline(papers: Sequence[Any], count: int, min_words: int, max_words: int) -> GeneratedQuestions:
    """Up to ``count`` distinct questions, deterministic. First those quoting an open problem a paper
    of the combination states (a limitation, an open question, future work) and asking how its other
    papers bear on it; then, when those are fewer than ``count``, questions on what one paper's
    findings mean for another's proposal. Empty when no question fits the word limits."""
    docs = papers_of(papers)
    problems = [stated_open_problems(paper) for paper in docs]
    titles = [title_forms(paper.title) for paper in docs]
    questions: list[str] = []
    for template, (a, b, c), problem in _drafts(len(docs), problems):
        if len(questions) == count:
            break
        question = _fill(template, (titles[a], titles[b], titles[c]), problem, min_words, max_words)
        if question is not None and question not in questions:
            questions.append(question)
    return GeneratedQuestions(questions=questions)


def _format_generation(inputs: Mapping[str, Any]) -> dict[str, str]:
    papers = papers_of(inputs["papers"])
    return {
        "papers": format_papers(papers),
        "paper_count": str(len(papers)),
        "count": str(inputs["count"]),
        "min_words": str(inputs["min_words"]),
        "max_words": str(inputs["max_words"]),
    }


# Characters per word, loosely, for a decoder's length bounds (the checks count the words).
_MIN_WORD_CHARS, _MAX_WORD_CHARS = 4, 6


def _question_shape(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """One capitalised question ending in "?", of about the allowed length."""
    return question_shape(_MIN_WORD_CHARS * inputs["min_words"], _MAX_WORD_CHARS * inputs["max_words"])


def _questions_schema(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """At most ``count`` questions, each well shaped."""
    return narrowed(
        GeneratedQuestions.model_json_schema(),
        questions={"items": _question_shape(inputs), "maxItems": inputs["count"]},
    )


GENERATE_QUESTIONS: Task[GeneratedQuestions] = register_task(
    Task(
        name="generate_questions",
        version=1,
        template="generate_questions.v1.txt",
        output_model=GeneratedQuestions,
        offline=generate_offline,
        inputs=("papers", "count", "min_words", "max_words"),
        decoding_schema=_questions_schema,
        format_inputs=_format_generation,
        temperature=0.7,  # SCOpE-QA, Appendix C
        max_tokens=2000,
        expected_output_tokens=600,
        description="Open-ended questions that span a combination of compressed papers.",
    )
)


# -- refine_questions ---------------------------------------------------------------------------


class RefinedQuestion(LazyModel):
    number: int = Field(description="The candidate's number, as shown in square brackets.")
    question: Text = Field(description="The selected question, possibly rewritten for clarity.")


class RefinedQuestions(LazyModel):
    selected: list[RefinedQuestion] = Field(description="The selected questions, best first.")


def check_refined(output: RefinedQuestions, inputs: Mapping[str, Any]) -> list[str]:
    problems = []
    count, quota = len(inputs["candidates"]), inputs["quota"]
    low, high = inputs["min_words"], inputs["max_words"]
    if len(output.selected) > quota:
        problems.append(f"{len(output.selected)} questions were selected; select at most {quota}")
    numbers = [item.number for item in output.selected]
    for number in sorted(set(numbers)):
        if not 1 <= number <= count:
            problems.append(f"there is no candidate number {number}; numbers run from 1 to {count}")
        elif numbers.count(number) > 1:
            problems.append(f"candidate {number} was selected more than once")
    for item in output.selected:
        words = word_count(item.question)
        if not low <= words <= high:
            problems.append(
                f"the question for candidate {item.number} has {words} words; it must have {low} to {high}"
            )
        if not item.question.endswith("?"):
            problems.append(f"the question for candidate {item.number} must end with a question mark")
    return problems


_DISTINCT_JACCARD = 0.5


def refine_offline(
    papers: Sequence[Any], candidates: Sequence[str], quota: int, min_words: int, max_words: int
) -> RefinedQuestions:
    """The ``quota`` candidates that name the most of the combination's papers (by a form of their
    title in quotes), in the order they were drafted otherwise, each unlike those kept before it
    where possible; unchanged."""
    titles = [paper.title for paper in papers_of(papers)]
    candidate_terms = [set(terms(candidate)) for candidate in candidates]

    def named(candidate: str) -> int:
        return sum(names_paper(candidate, title) for title in titles)

    order = sorted(range(len(candidates)), key=lambda index: (-named(candidates[index]), index))

    def distinct(index: int, chosen: list[int]) -> bool:
        found = candidate_terms[index]
        return all(
            len(found & candidate_terms[other]) <= _DISTINCT_JACCARD * len(found | candidate_terms[other])
            for other in chosen
        )

    chosen: list[int] = []
    for index in order:
        if len(chosen) < quota and distinct(index, chosen):
            chosen.append(index)
    for index in order:  # too few distinct ones: fill with the best of the rest
        if len(chosen) < quota and index not in chosen:
            chosen.append(index)
    return RefinedQuestions(
        selected=[RefinedQuestion(number=index + 1, question=candidates[index]) for index in chosen]
    )


def _format_refinement(inputs: Mapping[str, Any]) -> dict[str, str]:
    papers = "\n".join(
        f"- {paper.title} (topics: {'; '.join(paper.main_topics) or 'not listed'})"
        for paper in papers_of(inputs["papers"])
    )
    candidates = "\n".join(f"[{number}] {text}" for number, text in enumerate(inputs["candidates"], 1))
    return {
        "papers": papers,
        "candidates": candidates,
        "quota": str(inputs["quota"]),
        "min_words": str(inputs["min_words"]),
        "max_words": str(inputs["max_words"]),
    }


def _refined_schema(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """One to ``quota`` picks (a decoder may not leave every candidate out), each of a candidate
    number that exists, each question well shaped."""
    numbers = list(range(1, len(inputs["candidates"]) + 1))
    picks = narrowed(
        RefinedQuestions.model_json_schema(),
        "RefinedQuestion",
        number={"enum": numbers},
        question=_question_shape(inputs),
    )
    return narrowed(picks, selected={"minItems": 1, "maxItems": max(1, min(inputs["quota"], len(numbers)))})


REFINE_QUESTIONS: Task[RefinedQuestions] = register_task(
    Task(
        name="refine_questions",
        version=1,
        template="refine_questions.v1.txt",
        output_model=RefinedQuestions,
        offline=refine_offline,
        inputs=("papers", "candidates", "quota", "min_words", "max_words"),
        decoding_schema=_refined_schema,
        format_inputs=_format_refinement,
        check_output=check_refined,
        max_tokens=1200,
        expected_output_tokens=300,
        description="Select and refine the best candidate questions of one combination.",
    )
)
