"""The prompts: one template file per task and version (``NAME.vN.txt``), read by ``core/llm/tasks.py``;
a template's text and its version enter the cache key of every answer written from it."""
