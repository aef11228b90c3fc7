"""The two question tasks: ``generate_questions`` and ``refine_questions``.

Offline, generation fills a few fixed question templates in the paper's example form ("How do
different strategies for X reflect underlying assumptions about Y?") with the titles and the
extracted key phrases of two or three of the combination's papers: templated text built from
extracted phrases, not a model's questions. Offline refinement writes nothing either: it keeps the
candidates that touch the most papers' titles and topics, preferring ones unlike those already
kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from ..extractive import terms
from ..llm.tasks import Task, narrowed, register_task
from .records import word_count

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class Paper(BaseModel):
    """A compressed paper as the question and answer tasks receive it."""

    title: str
    text: str = ""
    main_topics: list[str] = []


def papers_of(papers: Sequence[Any]) -> list[Paper]:
    return [Paper.model_validate(paper) for paper in papers]


def format_papers(papers: Sequence[Paper]) -> str:
    # The compressed text opens with "Title: ...", so the title is not repeated here.
    return "\n\n".join(f"[Paper {number}]\n{paper.text}" for number, paper in enumerate(papers, 1))


# -- generate_questions -------------------------------------------------------------------------


class GeneratedQuestions(BaseModel):
    # May be empty: offline, no template may fit tight word limits.
    questions: list[Text] = Field(description="The candidate questions.")


_PAIR_TEMPLATES = (
    'How do different strategies for {a} in "{t1}" and "{t2}" reflect underlying assumptions about {b}?',
    'How do the approaches to {a} in "{t1}" and "{t2}" reflect different assumptions about {b}, and what '
    + "trade-offs follow for {c}?",
    'What trade-offs emerge when the treatment of {a} in "{t1}" is weighed against the emphasis on {b} in '
    + '"{t2}"?',
    'In what ways could insights about {a} from "{t1}" change how {b} is approached in "{t2}", and what '
    + "limitations might follow?",
    'How might combining the perspective on {a} in "{t1}" with the work on {b} in "{t2}" reshape our '
    + "understanding of {c}?",
    'What do "{t1}" and "{t2}" together suggest about the implications of {a} for {b}, and which '
    + "assumptions remain untested?",
)
# A combination of one paper (a one-paper collection) cannot span papers.
_SINGLE_TEMPLATES = (
    'How do the strategies for {a} in "{t1}" reflect underlying assumptions about {b}, and what '
    + "trade-offs follow for {c}?",
    'What are the implications of the treatment of {a} in "{t1}" for {b}, and which assumptions '
    + "remain untested?",
)
_SHORT_TITLE_WORDS = 5


def _title_forms(title: str) -> list[str]:
    """The title, then shorter forms of it: the part before a colon, then its first words."""
    forms = [title]
    head = title.split(":", 1)[0].strip()
    if head and head != title:
        forms.append(head)
    words = title.split()
    if len(words) > _SHORT_TITLE_WORDS:
        forms.append(" ".join(words[:_SHORT_TITLE_WORDS]) + "…")
    return forms


class _Topics:
    """Each paper's key phrases, handed out in turn so that questions vary."""

    def __init__(self, papers: Sequence[Paper]):
        self.topics = [paper.main_topics or [paper.title] for paper in papers]
        self.cursor = [0] * len(papers)

    def next(self, paper: int, avoid: Sequence[str] = ()) -> str:
        topics = self.topics[paper]
        for _ in range(len(topics)):
            topic = topics[self.cursor[paper] % len(topics)]
            self.cursor[paper] += 1
            if topic not in avoid:
                return topic
        return topics[self.cursor[paper] % len(topics)]


def _fill(
    template: str, titles: tuple[list[str], list[str]], topics: Mapping[str, str], low: int, high: int
) -> str | None:
    """The template filled with the longest title forms that keep it within [low, high] words."""
    first, second = titles
    for level in range(max(len(first), len(second))):
        question = template.format(
            t1=first[min(level, len(first) - 1)], t2=second[min(level, len(second) - 1)], **topics
        )
        if word_count(question) <= high:
            return question if word_count(question) >= low else None
    return None


def generate_offline(papers: Sequence[Any], count: int, min_words: int, max_words: int) -> GeneratedQuestions:
    """Up to ``count`` distinct templated questions, each naming two papers (when there are two)
    and topics of two or three; deterministic. Empty when no template fits the word limits."""
    docs = papers_of(papers)
    size = len(docs)
    if size == 1:
        templates, pairs = _SINGLE_TEMPLATES, [(0, 0)]
    else:
        templates = _PAIR_TEMPLATES
        pairs = [(i, (i + step) % size) for step in range(1, size) for i in range(size)]
    topics = _Topics(docs)
    questions: list[str] = []
    for n in range(count * len(templates) * 2):
        if len(questions) == count:
            break
        first, second = pairs[n % len(pairs)]
        others = [k for k in range(size) if k not in (first, second)]
        third = others[n % len(others)] if others else first
        a = topics.next(first)
        b = topics.next(second, avoid=[a])
        c = topics.next(third, avoid=[a, b])
        # Stepping the template once per round of pairs keeps pair and template from locking together.
        template = templates[(n + n // len(pairs)) % len(templates)]
        titles = (_title_forms(docs[first].title), _title_forms(docs[second].title))
        question = _fill(template, titles, {"a": a, "b": b, "c": c}, min_words, max_words)
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
    low, high = _MIN_WORD_CHARS * inputs["min_words"], _MAX_WORD_CHARS * inputs["max_words"]
    return {"type": "string", "pattern": f'^[A-Z][^"\\\\?]{{{low},{high}}}[?]$'}


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


class RefinedQuestion(BaseModel):
    number: int = Field(description="The candidate's number, as shown in square brackets.")
    question: Text = Field(description="The selected question, possibly rewritten for clarity.")


class RefinedQuestions(BaseModel):
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
    """The ``quota`` candidates that touch the most papers, then the most topic words, each unlike
    those kept before it where possible; unchanged."""
    docs = papers_of(papers)
    paper_terms = [set(terms(paper.title + " " + " ".join(paper.main_topics))) for paper in docs]
    topic_terms = set(terms(" ".join(topic for paper in docs for topic in paper.main_topics)))
    candidate_terms = [set(terms(candidate)) for candidate in candidates]

    def score(index: int) -> tuple[int, int, int]:
        found = candidate_terms[index]
        return (-sum(1 for words in paper_terms if found & words), -len(found & topic_terms), index)

    order = sorted(range(len(candidates)), key=score)

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
