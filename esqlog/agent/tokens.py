"""Token counts an agent can trust when it asks for "at most N tokens".

A budget is only useful if the count is the one the model pays. ``rs-bpe`` (the ``mcp``
extra) ships OpenAI's ``o200k_base`` BPE inside its wheel, so it counts offline; tiktoken
is not used because it downloads its vocabulary at run time. Without rs-bpe the count is an
estimate (characters / ``CHARS_PER_TOKEN``, rounded up), measured against o200k_base on
real code by ``scripts/bench/token_estimate.py`` and documented in docs/indexing.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

#: characters per o200k_base token: 3.0 on Go, 3.7 Ruby, 4.3 Java/Python (docs/indexing.md);
#: 2.5 over-counts 88-99.9% of documents (5th percentile error -10% on Go), so a budget
#: is rarely exceeded; measured by scripts/bench/token_estimate.py.
CHARS_PER_TOKEN = 2.5


@dataclass(frozen=True)
class TokenCounter:
    """``count(text)`` and the name of what counts (shown to the agent with every answer)."""

    name: str
    count: Callable[[str], int]


def estimate(text: str) -> int:
    """The fallback count: characters / CHARS_PER_TOKEN, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def default_counter() -> TokenCounter:
    """o200k_base through rs-bpe when installed, else the documented estimate."""
    try:
        from rs_bpe.bpe import openai
    except ImportError:
        return TokenCounter(f"estimate (characters/{CHARS_PER_TOKEN:g})", estimate)
    bpe = openai.o200k_base()
    return TokenCounter("o200k_base", lambda text: int(bpe.count(text)))
