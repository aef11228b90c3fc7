"""local: the bundled language model's speed, and each method group's wall time with it.

Part 1, the model: SmolLM2-135M (Q4_1 GGUF) through llama.cpp on this machine's cores. Prompt
tokens read per second and tokens written per second, through our ``LocalProvider`` (chat template,
schema grammar for JSON) next to a bare ``llama_cpp.Llama.create_completion`` on the same loaded model,
and the ratio between them (our overhead). Then a JSON answer under a schema's grammar, the same
chat on both paths: ours checks the grammar on the token picked (``grammar_last.py``), llama-cpp-python's
own sampler on the whole vocabulary at every token; greedy, so both write the same tokens.

Part 2, the methods: the demo collection (``data/collections/scholarly-docs``; ``--quick``: two of
its papers with ``SMOKE_SETTINGS``) in two temporary stores, ingestion built once in each, then
every method group materialized in dependency order, once with the offline default and once with
``local``: seconds per group side by side, and the model calls, tokens and failed items of the
local run. Needs no corpus.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import dagster as dg

from bench.common import REPO_ROOT, print_table, ratio, summary, timed
from bench.pipeline import QUIET, link_collection, temp_storage
from insight_assets.core.llm import gguf
from insight_assets.core.llm.providers import Message
from insight_assets.core.llm.providers.local_gguf import FREQUENCY_PENALTY, LocalProvider, json_schema_grammar
from insight_assets.core.llm.settings import ModelParams
from insight_assets.defs.catalog import ALL_ASSETS
from insight_assets.defs.resources import EmbedderResource, LLMResource
from insight_assets.defs.runs import SMOKE_CONTEXT_TOKENS, SMOKE_SETTINGS, materialize_collection

DEMO = REPO_ROOT / "data" / "collections" / "scholarly-docs"
QUICK_PAPERS = ["N18-3011_literature-graph-semantic-scholar.pdf", "2020.acl-main.207_specter.pdf"]
COLLECTION = "demo"
# Groups in the order their inputs are built (ingestion first, then what reads curation's questions).
GROUPS = ["ingestion", "curation", "insightgen", "xsum", "contregen", "insight_rag", "scipip"]
PROMPT = "Citation graphs connect research papers that cite one another. " * 40
ANSWER_TOKENS = 64
JSON_PROMPT = "List every claim of this text as JSON, each claim a full sentence:\n" + (
    "Citation graphs connect research papers that cite one another. Clustering such a graph groups "
    "papers by theme. Embeddings of abstracts place similar papers close together. A summary that cites "
    "its sources lets a reader check each claim. Retrieval finds the passages that answer a question, "
    "and a reranker orders them. Small language models run on a laptop without a network."
)
JSON_SCHEMA = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "string"}, "minItems": 5, "maxItems": 12}},
    "required": ["claims"],
}
JSON_ANSWER_TOKENS = 160


def run(corpus: Path, quick: bool) -> dict:
    model_rows = _model_speed()
    papers = [DEMO / name for name in QUICK_PAPERS] if quick else sorted(DEMO.glob("*.pdf"))
    seconds: dict[str, dict[str, float]] = {}
    calls: dict[str, dict[str, int]] = {}
    for provider in ("offline", "local"):
        seconds[provider], calls[provider] = _build(papers, provider, quick)
    rows = [
        {
            "group": group,
            "offline_s": seconds["offline"][group],
            "local_s": seconds["local"][group],
            "local/offline": ratio(seconds["local"][group], seconds["offline"][group]),
            **calls["local"].get(group, {}),
        }
        for group in GROUPS
    ]
    total = {key: sum(seconds[p].values()) for key, p in (("offline_s", "offline"), ("local_s", "local"))}
    rows.append({"group": "total", **total, "local/offline": ratio(total["local_s"], total["offline_s"])})
    print_table(
        model_rows,
        ["path", "prompt_tokens", "prompt_tok_s", "output_tokens", "output_tok_s", "seconds"],
        title="The bundled model on this machine",
    )
    print_table(
        rows,
        [
            "group",
            "offline_s",
            "local_s",
            "local/offline",
            "calls",
            "input_tokens",
            "output_tokens",
            "failed_items",
        ],
        title=f"The demo collection, {len(papers)} papers"
        + (" with SMOKE_SETTINGS" if quick else ", defaults"),
    )
    ours, bare, ours_json, bare_json = model_rows
    return {
        "model": model_rows,
        "groups": rows,
        "summary": summary(
            f"local {total['local_s'] / 60:.1f} min vs offline {total['offline_s'] / 60:.1f} min; "
            f"{ours['output_tok_s']:.0f} tokens/s written; under a JSON grammar "
            f"{ratio(ours_json['output_tok_s'], bare_json['output_tok_s']):.2f}x llama-cpp-python's sampler",
            ratio(ours["output_tok_s"], bare["output_tok_s"]),
            "ours / bare tokens/s written, no target",
        ),
    }


def _model_speed() -> list[dict]:
    """Prompt and answer throughput through our provider, then through the bare library, on one
    loaded model. Each path reads its own prompt (no shared cached prefix): once writing one token
    (the prompt's time), then again writing ``ANSWER_TOKENS`` (llama.cpp reuses the evaluated prompt,
    so this is the answer's time)."""
    path = gguf.model_file(None)
    provider = LocalProvider(path, context_cap=None, threads=None)
    llama = provider.model.llama

    def ours(text: str, tokens: int) -> tuple[int, int]:
        reply = provider.complete([Message("user", text)], _greedy(path, tokens))
        return reply.input_tokens or 0, reply.output_tokens or 0

    def bare(text: str, tokens: int) -> tuple[int, int]:
        usage = llama.create_completion(text, max_tokens=tokens, temperature=0.0)["usage"]
        return usage["prompt_tokens"], usage["completion_tokens"]

    rows = []
    for name, call, text in (
        ("ours (LocalProvider.complete)", ours, "Ours. " + PROMPT),
        ("bare (Llama.create_completion)", bare, "Bare. " + PROMPT),
    ):
        call("Warm up.", 4)  # the first call pays for page faults and thread start-up
        prompt_s, (prompt_tokens, _) = timed(call, text, 1)
        answer_s, (_, answer_tokens) = timed(call, text, ANSWER_TOKENS)
        rows.append(_speed_row(name, prompt_tokens, prompt_s, answer_tokens, answer_s))
    return rows + _json_speed(provider, path)


def _json_speed(provider: LocalProvider, path: Path) -> list[dict]:
    """A JSON answer under ``JSON_SCHEMA``'s grammar through our provider, then the same chat through
    a second, stock ``llama_cpp.Llama`` with the same grammar and sampling; timed as the prose rows."""
    import json

    import llama_cpp
    from llama_cpp.llama_grammar import LlamaGrammar

    loaded = provider.model
    stock = llama_cpp.Llama(
        model_path=str(path), n_ctx=loaded.context_tokens, n_threads=loaded.threads,
        n_threads_batch=loaded.threads, verbose=False,
    )  # fmt: skip
    grammar = LlamaGrammar.from_string(json_schema_grammar(JSON_SCHEMA), verbose=False)

    def ours(tokens: int) -> tuple[int, int, str]:
        reply = provider.complete([Message("user", JSON_PROMPT)], _greedy(path, tokens, JSON_SCHEMA))
        return reply.input_tokens or 0, reply.output_tokens or 0, reply.text

    def bare(tokens: int) -> tuple[int, int, str]:
        reply = stock.create_chat_completion(
            messages=[{"role": "user", "content": JSON_PROMPT}], grammar=grammar, temperature=0.0,
            frequency_penalty=FREQUENCY_PENALTY, max_tokens=tokens,
        )  # fmt: skip
        usage = reply["usage"]
        return usage["prompt_tokens"], usage["completion_tokens"], reply["choices"][0]["message"]["content"]

    rows, answers = [], []
    for name, call, model in (
        ("ours, JSON (grammar checked on the pick)", ours, loaded.llama),
        ("bare, JSON (llama-cpp-python's sampler)", bare, stock),
    ):
        model.reset()  # each path reads the prompt itself
        prompt_s, (prompt_tokens, _, _) = timed(call, 1)
        answer_s, (_, answer_tokens, text) = timed(call, JSON_ANSWER_TOKENS)
        answers.append(json.loads(text))
        rows.append(_speed_row(name, prompt_tokens, prompt_s, answer_tokens, answer_s))
    stock.close()
    if answers[0] != answers[1]:
        raise AssertionError(f"greedy JSON answers differ between the two samplers: {answers}")
    return rows


def _greedy(path: Path, max_tokens: int, schema: dict | None = None) -> ModelParams:
    """Our provider's parameters for a greedy answer, in JSON under ``schema`` when one is given."""
    return ModelParams(
        provider="local", model=path.stem, temperature=0.0, max_tokens=max_tokens, timeout_s=600.0,
        json_output=schema is not None, json_schema=schema, model_path=str(path),
    )  # fmt: skip


def _speed_row(name: str, prompt_tokens: int, prompt_s: float, answer_tokens: int, answer_s: float) -> dict:
    return {
        "path": name,
        "prompt_tokens": prompt_tokens,
        "prompt_tok_s": prompt_tokens / prompt_s,
        "output_tokens": answer_tokens,
        "output_tok_s": answer_tokens / answer_s,
        "seconds": prompt_s + answer_s,
    }


def _build(papers: list[Path], provider: str, smoke: bool) -> tuple[dict[str, float], dict[str, dict]]:
    """Seconds per group, and the model calls per group, of one build in fresh stores."""
    settings = SMOKE_SETTINGS if smoke else {}
    run_config = {**QUIET, "ops": {name: {"config": values} for name, values in settings.items()}}
    seconds, calls = {}, {}
    with (
        tempfile.TemporaryDirectory(prefix=f"bench-local-{provider}-") as tmp,
        dg.instance_for_test() as instance,
    ):
        storage = temp_storage(Path(tmp))
        link_collection(storage, COLLECTION, papers)
        llm = LLMResource(
            provider=provider,
            context_tokens=SMOKE_CONTEXT_TOKENS if smoke else None,
            data_dir=str(Path(tmp) / "data"),
        )
        for group in GROUPS:
            assets = [a for a in ALL_ASSETS if group in a.group_names_by_key.values()]
            used = {key for asset in assets for key in asset.keys}
            config = {
                **run_config,
                "ops": {k: v for k, v in run_config["ops"].items() if dg.AssetKey(k) in used},
            }
            print(f"{provider}: {group} ...", flush=True)
            seconds[group], result = timed(
                lambda assets=assets, config=config: materialize_collection(
                    instance, storage, EmbedderResource(), COLLECTION,
                    llm=llm, assets=assets, run_config=config, raise_on_error=False,
                )
            )  # fmt: skip
            if not result.success:
                print(f"  {group} did not fully build with {provider}: see the run's log")
            calls[group] = _model_calls(result)
    return seconds, calls


def _model_calls(result: dg.ExecuteInProcessResult) -> dict[str, int]:
    """Calls, tokens and failed items summed over the group's materializations."""
    totals = {"calls": 0, "input_tokens": 0, "output_tokens": 0, "failed_items": 0}
    for event in result.get_asset_materialization_events():
        metadata = event.step_materialization_data.materialization.metadata
        for key in totals:
            value = metadata.get(f"llm_{key}")
            totals[key] += int(value.value) if value is not None else 0
    return totals
