"""One way to ask a model: tasks, providers, an offline default, a cache, a ledger, a budget.

Plain Python (no Dagster), so it is unit-testable; the Dagster layer builds ``LLMSettings`` from
its resource config (keys via ``dg.EnvVar``), one ``LLMClient`` per asset execution, and turns
``client.summary().as_metadata()`` into asset metadata.

Using it::

    client = LLMClient(settings, cache=ResponseCache.in_data_dir(data_dir),
                       ledger=CallLedger.in_data_dir(data_dir), budget=Budget(max_usd=2.0),
                       context=CallContext(asset="summaries", partition="papers-2024"))
    answer = client.run(SUMMARIZE_PASSAGES, question=q, passages=passages)   # a PassageSummary
    batch = client.run_many(SUMMARIZE_PASSAGES, [{"question": q, "passages": p} for p in groups])
    estimate = client.dry_run(SUMMARIZE_PASSAGES, items)                       # no calls at all

Providers: ``offline`` (the default: no network; each task's deterministic, extractive
implementation, labelled "offline (extractive)"), ``local`` (a GGUF model in this process through
llama.cpp; the bundled SmolLM2-135M by default), ``openai``, ``anthropic``, ``gemini`` and
``openai-compatible`` (any OpenAI-style server at ``base_url``: Ollama, vLLM, llama.cpp).

Adding a task (a method adds tasks, not plumbing):

1. Write the prompt as ``insight_assets/core/prompts/<name>.v<version>.txt`` with
   ``string.Template`` placeholders (``$question``). Put ``$output_schema`` where the JSON schema
   of the answer should appear and ask for "one JSON object only".
2. Define the output as a pydantic model; constrain it (``min_length``, ``Literal``) so that bad
   answers fail validation instead of flowing on.
3. Write the offline implementation: a deterministic function of the inputs that returns the
   output model by *selecting* from the inputs (see ``core/extractive.py``), never by inventing text.
4. Optionally add ``check_output`` for grounding checks the schema cannot express (every cited id
   exists), and ``format_inputs`` when JSON would make a poor prompt. Name in ``trim_input`` the
   input (passages, most relevant first) that may lose its tail to fit a model's context window.
   For models that decode under a schema (``local``, llama.cpp servers), ``decoding_schema(inputs)``
   narrows the schema to the inputs (``narrowed(schema, ids={"items": {"enum": ids}})``,
   ``exactly(n)``, ``one_item_each(schema, "ratings", "idea", numbers)``, a string's pattern from
   ``grammars.cited_text_pattern(aliases)``), and a prose task's ``decoding_grammar(inputs)`` gives
   its text a grammar (``grammars.cited_prose(aliases)``): the checks then pass by construction for
   a small model.
5. ``MY_TASK = register_task(Task(name=..., version=1, template=..., output_model=...,
   offline=..., max_tokens=..., expected_output_tokens=...))``.

Bump ``version`` (and name a new template file) whenever the meaning of the task changes; the
template text and the version are part of the cache key, so either change re-asks the model.
``passage_answers.py`` is a complete example.
"""

from .budget import Budget
from .cache import ResponseCache, cache_key
from .client import LLMClient
from .dry_run import DryRunEstimate
from .errors import (
    AuthenticationError,
    BudgetExceeded,
    ConfigurationError,
    InvalidOutputError,
    LLMError,
    ProviderError,
    RequestRejectedError,
    RetriesExhaustedError,
    TaskDefinitionError,
    TaskInputError,
    UnknownModelError,
)
from .ledger import CallLedger, CallProgress, LedgerRow, RunSummary
from .passage_answers import SUMMARIZE_PASSAGES, Passage, PassageSummary
from .pricing import PRICES, Price, estimate_cost, price_for
from .providers import OFFLINE_LABEL
from .results import BatchResult, CallContext, ItemResult
from .settings import DEFAULT_API_KEY_ENV, DEFAULT_MODELS, PROVIDERS, LLMSettings, TaskParams
from .tasks import (
    Task,
    exactly,
    get_task,
    list_problems,
    narrowed,
    one_item_each,
    question_shape,
    register_task,
    registered_tasks,
)

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_MODELS",
    "OFFLINE_LABEL",
    "PRICES",
    "PROVIDERS",
    "SUMMARIZE_PASSAGES",
    "AuthenticationError",
    "BatchResult",
    "Budget",
    "BudgetExceeded",
    "CallContext",
    "CallLedger",
    "CallProgress",
    "ConfigurationError",
    "DryRunEstimate",
    "InvalidOutputError",
    "ItemResult",
    "LLMClient",
    "LLMError",
    "LLMSettings",
    "LedgerRow",
    "Passage",
    "PassageSummary",
    "Price",
    "ProviderError",
    "RequestRejectedError",
    "ResponseCache",
    "RetriesExhaustedError",
    "RunSummary",
    "Task",
    "TaskDefinitionError",
    "TaskInputError",
    "TaskParams",
    "UnknownModelError",
    "cache_key",
    "estimate_cost",
    "exactly",
    "get_task",
    "list_problems",
    "narrowed",
    "one_item_each",
    "price_for",
    "question_shape",
    "register_task",
    "registered_tasks",
]
