"""Grammars for prose answers, for providers that decode under one (``local``).

A JSON task narrows its schema (``Task.decoding_schema``); a prose task that cites its sources by
alias ("... as shown [S2].") can give ``Task.decoding_grammar`` instead: the text may cite only the
aliases it was given, and cites at least one. The task's checks still judge the answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

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
