"""``ask`` answers with the settings the collection was built with (each step's config, kept with
its build), not with the defaults: a build configured away from them, then the same question asked
with that config and with none on record."""

from __future__ import annotations

import re

from insight_assets.core.methods.contregen.settings import TreesSettings
from insight_assets.core.methods.insight_rag.settings import AnswersSettings
from insight_assets.core.methods.insightgen.settings import InsightsSettings
from insight_assets.core.methods.scipip.settings import RetrievalSettings
from insight_assets.core.methods.xsum.settings import QuestionsSettings
from insight_assets.defs.asking import Asked, ask, ask_flows
from insight_assets.defs.resources import LLMResource
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE, add_collection
from insight_assets_tests.defs.helpers import assets_up_to, materialize_collection

QUESTION = "How are scientific papers represented and evaluated?"
BUILT_WITH = {
    "contregen_trees": {"max_depth": 1, "max_sub_questions": 2},
    "insights": {"max_insights": 2},
    "xsum_questions": {"questions_per_paper": 1},
    "insight_rag_answers": {"insight_search_mode": "dense"},
    "scipip_retrievals": {"n_papers": 1},
    "scipip_ideas": {},
}
METHODS = ("contregen", "insightgen", "xsum", "insight-rag", "scipip")


def answers(storage, embedder, llm: LLMResource) -> dict[str, str]:
    """Each method's answer, with what led to it, to ``QUESTION``."""
    asked = Asked("demo", QUESTION, storage, embedder)
    found = {}
    for method in METHODS:
        flow = ask_flows()[method]
        answered = ask(
            method,
            flow.help,
            flow.answer,
            asked,
            lambda: llm.client(asset="ask", partition="demo", run_id=None),
        )
        assert answered.ok, answered.error
        found[method] = f"{answered.answer.text}\n{answered.answer.details}"
    return found


def sub_questions(tree: str, depth: int) -> int:
    return sum(1 for line in tree.splitlines() if re.match(rf"^ {{{2 * depth}}}- ", line))


def insights(text: str) -> int:
    return len(re.findall(r"^\d+\. \[", text, re.MULTILINE))


def questions(details: str) -> int:
    return int(re.search(r"Questions: (\d+)", details).group(1))


def papers_retrieved(ideas: str) -> int:
    listed = ideas.split("Retrieved papers", 1)[1].split("\nIdeas", 1)[0]
    return sum(1 for line in listed.splitlines() if line.startswith("- "))


def test_ask_uses_the_settings_the_collection_was_built_with(instance, storage, hashing_embedder, tmp_path):
    # Each setting is away from its default, so that an answer made with the defaults differs.
    assert TreesSettings().max_depth > 1 and TreesSettings().max_sub_questions > 2
    assert InsightsSettings().max_insights > 2 and QuestionsSettings().questions_per_paper > 1
    assert AnswersSettings().insight_search_mode != "dense" and RetrievalSettings().n_papers > 1
    add_collection(storage, "demo", DEMO_PDFS_BY_SIZE[:2])
    llm = LLMResource(data_dir=str(tmp_path / "data"))
    materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=llm,
        assets=assets_up_to(*BUILT_WITH),
        run_config={"ops": {asset: {"config": values} for asset, values in BUILT_WITH.items()}},
    )

    built = answers(storage, hashing_embedder, llm)
    assert sub_questions(built["contregen"], 1) <= 2 and sub_questions(built["contregen"], 2) == 0
    assert 0 < insights(built["insightgen"]) <= 2
    papers = questions(built["xsum"])  # one question per paper
    assert papers > 0
    assert "index retriever, dense search" in built["insight-rag"]
    assert papers_retrieved(built["scipip"]) == 1

    # With no config on record (a build from before builds kept theirs), the defaults answer.
    storage.warehouse.write(lambda connection: connection.execute("UPDATE asset_builds SET config = NULL"))
    defaults = answers(storage, hashing_embedder, llm)
    assert sub_questions(defaults["contregen"], 1) > 2 or sub_questions(defaults["contregen"], 2) > 0
    assert insights(defaults["insightgen"]) > 2
    assert questions(defaults["xsum"]) > papers
    assert "index retriever, hybrid search" in defaults["insight-rag"]
    assert papers_retrieved(defaults["scipip"]) > 1
