"""Validation of chat arguments at the public boundary of every client."""

from __future__ import annotations

from confidence.llm.base import Message


def check_messages(messages: list[Message]) -> list[Message]:
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, m in enumerate(messages):
        role_ok = isinstance(m, dict) and m.get("role") in ("system", "user", "assistant")
        if not role_ok or not isinstance(m.get("content"), str):
            raise ValueError(
                f"messages[{i}] must be {{'role': 'system'|'user'|'assistant', 'content': str}}"
            )
    return messages


def check_params(n: int, temperature: float, max_tokens: int, top_logprobs: int) -> None:
    if n < 1:
        raise ValueError(f"n={n}; ask for at least one completion")
    if temperature < 0:
        raise ValueError(f"temperature={temperature}; use 0 (greedy) or a positive value")
    if max_tokens < 1:
        raise ValueError(f"max_tokens={max_tokens}; use a positive number of tokens")
    if not 0 <= top_logprobs <= 20:
        raise ValueError(f"top_logprobs={top_logprobs}; use 0..20 (OpenAI's maximum)")
