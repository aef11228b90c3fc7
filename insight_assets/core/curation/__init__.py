"""SCOpE-QA-style question–answer curation for a collection (InsightGen, §3 and Appendix A/C).

Plain Python (no Dagster); every model call goes through ``core.llm``, so the offline provider
(extractive and templated, no network) works everywhere and a model provider is configuration.

The stages, each a function of the previous one's output::

    compressed = compress_documents(client, documents)                 # one digest per paper
    questions = generate_questions(client, compressed.compressed, QuestionsSettings(), embed)
    user = load_user_questions(folder / "questions.jsonl", known_document_ids=ids)
    answers = generate_answers(client, user.questions + questions.questions,
                               compressed.compressed, AnswersSettings(), embed)
    write_jsonl(export_records(name, answers.answers, titles), path)

Each outcome lists its failures (one item failing does not stop the others) and, when the
budget ran out, ``budget_error``. The prompts are ``core/prompts/compress_document.v1.txt``,
``generate_questions.v1.txt``, ``refine_questions.v1.txt`` and ``answer_question.v1.txt``.
"""

from .answers import (
    ANSWER_QUESTION,
    DUPLICATE,
    KEPT,
    Answer,
    AnswerOutcome,
    AnswersSettings,
    GroundedAnswer,
    answer_source_label,
    citations_valid,
    generate_answers,
    kept_pairs,
    reference_answers,
)
from .combinations import (
    Combination,
    QuestionsSettings,
    combination_size_for,
    questions_per_combination,
    sample_combinations,
)
from .compression import (
    COMPRESS_DOCUMENT,
    CompressionOutcome,
    CompressionSettings,
    DocumentDigest,
    compress_documents,
    compression_inputs,
    papers_to_compress,
)
from .export import SCOPE_QA_FIELDS, export_records, write_jsonl
from .question_tasks import GENERATE_QUESTIONS, REFINE_QUESTIONS, GeneratedQuestions, RefinedQuestions
from .questions import CandidateQuestion, QuestionOutcome, generate_questions
from .records import (
    GENERATED,
    USER,
    CompressedDocument,
    Embed,
    ItemFailure,
    QAPair,
    Question,
    SourceDocument,
    question_id,
)
from .tables import (
    answers_table,
    compressed_table,
    load_answers,
    load_compressed,
    load_pairs,
    load_questions,
    merge_user_questions,
    question_tables,
)
from .user_questions import USER_QUESTIONS_FILE, LineProblem, UserQuestionsOutcome, load_user_questions

__all__ = [
    "ANSWER_QUESTION",
    "COMPRESS_DOCUMENT",
    "DUPLICATE",
    "GENERATED",
    "GENERATE_QUESTIONS",
    "KEPT",
    "REFINE_QUESTIONS",
    "SCOPE_QA_FIELDS",
    "USER",
    "USER_QUESTIONS_FILE",
    "Answer",
    "AnswerOutcome",
    "AnswersSettings",
    "CandidateQuestion",
    "Combination",
    "CompressedDocument",
    "CompressionOutcome",
    "CompressionSettings",
    "DocumentDigest",
    "Embed",
    "GeneratedQuestions",
    "GroundedAnswer",
    "ItemFailure",
    "LineProblem",
    "QAPair",
    "Question",
    "QuestionOutcome",
    "QuestionsSettings",
    "RefinedQuestions",
    "SourceDocument",
    "UserQuestionsOutcome",
    "answer_source_label",
    "answers_table",
    "citations_valid",
    "combination_size_for",
    "compress_documents",
    "compressed_table",
    "compression_inputs",
    "export_records",
    "generate_answers",
    "generate_questions",
    "kept_pairs",
    "load_answers",
    "load_compressed",
    "load_pairs",
    "load_questions",
    "load_user_questions",
    "merge_user_questions",
    "papers_to_compress",
    "question_id",
    "question_tables",
    "questions_per_combination",
    "reference_answers",
    "sample_combinations",
    "write_jsonl",
]
