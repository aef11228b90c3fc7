"""The parametric insight retriever, trained for real: LoRA on a handful of invented facts with the
bundled SmolLM2-135M, a few epochs at a high learning rate, on the CPU."""

from __future__ import annotations

import pytest
import torch

from insight_assets.core.llm.errors import ConfigurationError
from insight_assets.core.methods.insight_rag import cpt
from insight_assets.core.methods.insight_rag.causal_lm import CausalLM, base_model_source
from insight_assets.core.methods.insight_rag.triples import Triple
from insight_assets.core.text import count_tokens

# Facts no pre-trained model can know: invented names.
FACTS = [
    ("the zorblax protocol", "uses", "quantum fennel tokens"),
    ("the mirelith corpus", "contains", "annotated whale dialogues"),
    ("graph ripple attention", "improves", "citation recall"),
    ("the vantor benchmark", "measures", "tabular hallucination"),
    ("the quillon parser", "reads", "scanned ledger pages"),
]
TRIPLES = [
    Triple(s, r, o, r, "doc", "chunk", f"{s.capitalize()} {r} {o} in our experiments.") for s, r, o in FACTS
]
SETTINGS = cpt.CPTSettings(epochs=5, learning_rate=3e-3, batch_size=8, max_epoch_tokens=None, probes=5)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One real training shared by the module's tests: its record and the adapter's folder."""
    folder = tmp_path_factory.mktemp("adapters") / "demo"
    texts = cpt.training_texts(TRIPLES, SETTINGS, count_tokens)
    asked = cpt.probes(TRIPLES, texts, SETTINGS.probes, SETTINGS.seed)
    return cpt.train_adapter(texts, SETTINGS, base_model_source(None), folder, asked), folder


@pytest.mark.local_model
def test_the_adapted_model_completes_a_trained_fact_that_the_base_model_does_not(trained):
    training, folder = trained
    source = base_model_source(None)
    fragments = ["the zorblax protocol uses", "the vantor benchmark measures"]

    adapted = CausalLM.open(source, folder).complete(fragments, [1, 1], 24)
    base = CausalLM.open(source).complete(fragments, [1, 1], 24)

    assert "quantum fennel tokens" in adapted[0][0].lower()
    assert "tabular hallucination" in adapted[1][0].lower()
    assert "quantum fennel" not in base[0][0].lower() and "tabular hallucination" not in base[1][0].lower()
    assert training.epoch_losses[-1] < training.epoch_losses[0] / 4
    # Memorisation seen happening: no probe recalled before training, most after.
    assert training.probe_accuracy[0] == 0.0 and training.probe_accuracy[-1] >= 0.6
    assert training.device == "cpu" and training.base_parameters > 100_000_000


@pytest.mark.local_model
def test_the_adapter_is_keyed_by_its_texts_settings_and_base_model_and_read_back(trained):
    training, folder = trained
    texts = cpt.training_texts(TRIPLES, SETTINGS, count_tokens)
    source = base_model_source(None)
    key = cpt.adapter_key(texts, SETTINGS, source)

    assert cpt.adapter_key(list(texts), cpt.CPTSettings(**{**SETTINGS.__dict__, "probes": 0}), source) == key
    assert cpt.adapter_key(texts[:-1], SETTINGS, source) != key
    assert cpt.adapter_key(texts, cpt.CPTSettings(**{**SETTINGS.__dict__, "rank": 4}), source) != key
    assert cpt.read_training(folder) == training
    assert cpt.read_training(folder.parent / "missing") is None


def test_a_budget_keeps_facts_before_sentences():
    texts = cpt.training_texts(TRIPLES, cpt.CPTSettings(max_epoch_tokens=40), count_tokens)
    facts = {cpt.verbalise(t) for t in TRIPLES}

    assert texts and set(texts) <= facts and sum(count_tokens(t) + 1 for t in texts) <= 40
    everything = cpt.training_texts(TRIPLES, cpt.CPTSettings(max_epoch_tokens=None), count_tokens)
    assert set(everything) == facts | {t.sentence for t in TRIPLES}
    # A roomy budget: every fact, and sentences up to as many tokens as the facts took.
    roomy = cpt.training_texts(TRIPLES, cpt.CPTSettings(max_epoch_tokens=1000), count_tokens)
    context = [t for t in roomy if t not in facts]
    assert facts <= set(roomy) and context
    assert sum(count_tokens(t) + 1 for t in context) <= sum(count_tokens(t) + 1 for t in facts)


def test_a_missing_or_wrong_base_model_is_a_clear_error_before_training(tmp_path):
    with pytest.raises(ConfigurationError, match="does not exist"):
        base_model_source(str(tmp_path / "no-such-model.gguf"))
    (tmp_path / "folder").mkdir()
    with pytest.raises(ConfigurationError, match="without config.json"):
        base_model_source(str(tmp_path / "folder"))
    (tmp_path / "notes.gguf").write_text("not a model")
    with pytest.raises(ConfigurationError, match="not a GGUF file"):
        base_model_source(str(tmp_path / "notes.gguf"))


def test_a_training_whose_loss_is_not_a_number_fails_with_its_step_and_stores_nothing(tmp_path):
    """A base model with a NaN weight (a corrupt checkpoint) gives a NaN loss at the first step."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    bundled = base_model_source(None)
    tokenizer = AutoTokenizer.from_pretrained(str(bundled.folder), gguf_file=bundled.gguf_file)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
        )
    )
    with torch.no_grad():
        model.model.layers[0].mlp.down_proj.weight[0, 0] = float("nan")
    corrupt = tmp_path / "corrupt-model"
    model.save_pretrained(str(corrupt))
    tokenizer.save_pretrained(str(corrupt))
    destination = tmp_path / "adapter"

    with pytest.raises(cpt.TrainingDiverged) as failed:
        cpt.train_adapter(["a fact."], SETTINGS, base_model_source(str(corrupt)), destination)

    assert failed.value.step == 1 and failed.value.epoch == 1 and "loss nan" in str(failed.value)
    assert not destination.exists() and not list(tmp_path.glob("adapter*"))
