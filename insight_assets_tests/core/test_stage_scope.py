"""A stage's scope in its three modes: a build reads each hand-off back from the warehouse, a dry
run keeps what each stage hands on (and the settings it was priced with), one question stands in
for the hand-offs it gives and reads the rest from the build."""

from pathlib import Path

import pytest

from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.runtime.stage import CollectionScope, Handoff, Mode, Stage, StageSettings
from insight_assets.core.runtime.stage_output import StageOutput

STORED = Handoff("toy_words", lambda warehouse, collection: [f"stored for {collection}"])
ASKED = Handoff[list[str]]("toy_question")


class CountSettings(StageSettings):
    """No settings of its own."""


def count_words(scope: CollectionScope, settings: CountSettings) -> dict[str, int]:
    words = scope.stood_in(ASKED) or scope.upstream(STORED)
    return {"words": len(" ".join(words).split())}


COUNT = Stage(
    "toy_counts",
    "toy",
    "Words counted.",
    CountSettings,
    reads=(STORED.name,),
    run=count_words,
    hands=(Handoff("toy_counts", lambda warehouse, collection: {}).of(lambda counted: counted),),
    output=lambda scope, settings, counted: StageOutput({}, counted),
)


@pytest.fixture
def scope() -> CollectionScope:
    # A build's scope reads its hand-offs through their loaders; these read no store at all.
    return CollectionScope(
        warehouse=None,
        vectors=None,
        vectors_uri="",
        embedder=None,
        client=LLMClient(LLMSettings(), estimate_only=True),
        collection="papers",
        folder=Path("."),
    )


def test_a_build_reads_hand_offs_back_and_keeps_none(scope):
    assert scope.mode is Mode.BUILD
    assert scope.run(COUNT, CountSettings()) == {"words": 3}  # "stored for papers"
    assert scope.handed == {} and scope.priced == {}
    assert scope.stood_in(ASKED) is None
    with pytest.raises(TypeError, match="only stood in by a question"):
        scope.upstream(ASKED)


def test_a_dry_run_keeps_what_each_stage_hands_on_and_its_settings(scope):
    dry = scope.dry_run()
    settings = CountSettings(max_tokens=50)
    assert dry.run(COUNT, settings) == {"words": 3}
    assert dry.upstream(Handoff("toy_counts", lambda warehouse, collection: {})) == {"words": 3}
    assert dry.built_settings("toy_counts", CountSettings) is settings
    assert scope.handed == {}  # the build's scope it was made from is untouched


def test_one_question_stands_in_for_its_hand_offs_and_reads_the_rest_from_the_build(scope):
    question = scope.for_question({ASKED: ["what", "is", "a", "theme"]})
    assert question.mode is Mode.QUESTION
    assert question.run(COUNT, CountSettings()) == {"words": 4}
    assert question.upstream(STORED) == ["stored for papers"]
    assert question.handed["toy_counts"] == {"words": 4}
    assert scope.for_question({}).run(COUNT, CountSettings()) == {"words": 3}
