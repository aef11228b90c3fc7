"""Seven short synthetic papers on one theme (making language models cheaper to run)."""

from __future__ import annotations

from insight_assets.core.curation import SourceDocument

_PAPERS = [
    (
        "gptq",
        "GPTQ: Accurate Post-Training Quantization for Generative Pre-trained Transformers",
        """Large language models are expensive to serve because their weights occupy hundreds of gigabytes of memory. Post-training quantization reduces the memory footprint without retraining the model.

We propose GPTQ, a one-shot weight quantization method based on approximate second-order information. GPTQ quantizes each layer column by column and updates the remaining weights to compensate for the quantization error. Our approach quantizes models with 175 billion parameters in about four GPU hours.

Experiments show that GPTQ reduces the weights to 3 or 4 bits with negligible increase in perplexity. The quantized models achieve a 3.2x speedup on a single GPU compared to half precision. Weight quantization at 3 bits remains stable for the largest models, while smaller models lose more accuracy.

In conclusion, second-order weight quantization makes it practical to run very large language models on a single accelerator. Future work should study activation quantization and the interaction with sparsity.""",
    ),
    (
        "awq",
        "AWQ: Activation-aware Weight Quantization for LLM Compression and Acceleration",
        """Weight-only quantization lowers the memory cost of large language models, but uniform rounding harms a small set of salient weights. Activation statistics reveal which weight channels matter most.

We introduce activation-aware weight quantization, which protects the one percent of salient channels by scaling them before quantization. The method needs no backpropagation and no reconstruction, so it generalizes across domains and modalities.

Results show that AWQ outperforms round-to-nearest quantization and matches GPTQ on language modeling while using a small calibration set. Our kernels achieve a 3x speedup over half precision on desktop and mobile GPUs.

We conclude that activation statistics are a better guide to weight importance than weight magnitudes. Protecting salient channels keeps the accuracy of 4-bit models close to the full-precision baseline.""",
    ),
    (
        "smoothquant",
        "SmoothQuant: Accurate and Efficient Post-Training Quantization for Large Language Models",
        """Quantizing both weights and activations to 8 bits would let large language models use integer matrix multiplication. Activation outliers make activation quantization difficult because a few channels have very large magnitudes.

We present SmoothQuant, which migrates the quantization difficulty from activations to weights with a mathematically equivalent per-channel scaling. The smoothing factor balances the ranges of activations and weights so that both can be quantized to 8 bits.

SmoothQuant achieves up to 1.56x speedup and halves the memory while preserving accuracy on models up to 530 billion parameters. The results show that outlier migration is more effective than keeping outlier channels in higher precision.

Overall, smoothing activation outliers enables hardware-friendly integer inference for language models. A limitation is that the migration strength must be tuned for each model family.""",
    ),
    (
        "qlora",
        "QLoRA: Efficient Finetuning of Quantized LLMs",
        """Finetuning large language models requires far more memory than inference because gradients and optimizer states must be stored. Low-rank adapters reduce the number of trainable parameters but still require the full-precision base model.

We propose QLoRA, which backpropagates through a frozen 4-bit quantized model into low-rank adapters. QLoRA introduces the 4-bit NormalFloat data type, double quantization of the quantization constants, and paged optimizers to manage memory spikes.

Our best model family reaches 99.3 percent of the performance level of ChatGPT on the Vicuna benchmark after 24 hours of finetuning on a single GPU. Results show that 4-bit finetuning matches 16-bit full finetuning on academic benchmarks.

We conclude that quantization and parameter-efficient finetuning can be combined without losing quality. Data quality matters more than dataset size for instruction finetuning.""",
    ),
    (
        "llm-int8",
        "LLM.int8(): 8-bit Matrix Multiplication for Transformers at Scale",
        """Large transformer models need a lot of GPU memory for inference. Eight-bit quantization halves that memory, but emergent outlier features in large models break standard quantization.

We introduce a two-part quantization procedure that uses vector-wise quantization for most features and a mixed-precision decomposition that keeps outlier dimensions in 16 bits. This decomposition isolates the few outlier feature dimensions that dominate attention.

The method enables inference of models with 175 billion parameters on a single server without any performance degradation. We find that outlier features emerge systematically once models pass about 6.7 billion parameters.

In conclusion, handling emergent outliers is the key to accurate 8-bit inference at scale. The mixed-precision decomposition trades some speed for accuracy on smaller models.""",
    ),
    (
        "sparsegpt",
        "SparseGPT: Massive Language Models Can Be Accurately Pruned in One-Shot",
        """Pruning removes weights from neural networks to reduce their cost, but pruning large language models usually requires expensive retraining. One-shot pruning methods promise compression without any training.

We present SparseGPT, a one-shot pruning method that solves a sparse regression problem for each layer with an approximate second-order update. The algorithm reaches 50 to 60 percent unstructured sparsity on the largest open models.

Experiments show that SparseGPT removes more than 100 billion weights with negligible increase in perplexity. Pruning combines with weight quantization, and larger models prove easier to prune than smaller ones.

We conclude that massive language models contain substantial redundancy that one-shot pruning can exploit. Future work includes structured sparsity patterns that current hardware can accelerate.""",
    ),
    (
        "distil",
        "Knowledge Distillation for Compact Language Models",
        """Distillation trains a small student model to imitate a large teacher model, which reduces inference cost. Unlike quantization and pruning, distillation changes the architecture of the deployed model.

This paper introduces a task-agnostic distillation objective that matches the teacher's attention distributions and hidden states. The student keeps the teacher's vocabulary but uses fewer and narrower layers.

The distilled student retains 97 percent of the teacher's accuracy while running 60 percent faster. Results indicate that attention transfer improves the student more than matching output logits alone.

Overall, distillation offers a complementary path to efficiency that requires training compute but yields a smaller dense model. Combining distillation with quantization is a promising direction for future work.""",
    ),
]

PAPERS = [SourceDocument(document_id, title, text) for document_id, title, text in _PAPERS]
