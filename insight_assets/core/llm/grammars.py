"""Grammars for prose answers, for providers that decode under one (``local``), and patterns for
the strings of a JSON task's decoding schema.

A JSON task narrows its schema (``Task.decoding_schema``); a prose task that cites its sources by
alias ("... as shown [S2].") can give ``Task.decoding_grammar`` instead: the text may cite only the
aliases it was given, and cites at least one. The task's checks still judge the answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

# What a string's pattern must leave out to stay inside a JSON string: a quote, a backslash, a
# control character. (A pattern's character classes bypass the converter's rule for strings, and a
# raw newline would not parse.)
NOT_IN_JSON_STRING = r'"\\\x00-\x1F\x7F'

# The most characters between two citations: a model must cite as it goes, rather than write on
# until max_tokens and never reach its first citation (llama.cpp reads {m,n} natively).
MAX_UNCITED_CHARS = 300


def cited_prose(aliases: Sequence[str]) -> str:
    """GBNF of a text that cites, in square brackets, only ``aliases`` ("[S1]", "[S1, S3]"), at
    least once and at least every ``MAX_UNCITED_CHARS`` characters. Without aliases: any text without
    square brackets."""
    if not aliases:
        return "root ::= [^\\[\\]]+\n"
    names = " | ".join(json.dumps(alias) for alias in dict.fromkeys(aliases))
    return "\n".join(
        [
            "root ::= (text cite)+ text?",
            f"text ::= [^\\[\\]]{{1,{MAX_UNCITED_CHARS}}}",
            'cite ::= "[" alias (", " alias)* "]"',
            f"alias ::= {names}",
            "",
        ]
    )


def cited_text_pattern(aliases: Sequence[str]) -> str:
    """The pattern of a JSON string that, like ``cited_prose``, cites only ``aliases``, at least once
    (no bound on the text between citations: the converter would spell it out character by character)."""
    text = rf"[^{NOT_IN_JSON_STRING}\[\]]*"
    name = "(" + "|".join(re.escape(alias) for alias in dict.fromkeys(aliases)) + ")"
    return rf"^{text}(\[{name}(, {name})*\]{text})+$"
