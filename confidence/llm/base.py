"""The LLM client protocol and the completion it returns.

A client turns chat messages (optionally with a JSON schema to constrain the reply) into a
:class:`Completion` carrying the reply text and, when the provider gives them, per-token
log-probabilities with the top-k alternatives. Clients must never log API keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from sys import intern
from typing import Any, Protocol, runtime_checkable

Message = dict[str, str]
"""``{"role": "system"|"user"|"assistant", "content": str}``."""


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One generated token with its log-probability and the top-k alternatives.

    ``top`` holds ``(token, logprob)`` pairs, most likely first (it may include the chosen token).

    Examples
    --------
    >>> t = TokenLogprob("12", -0.05, (("12", -0.05), ("13", -3.2)))
    >>> TokenLogprob.from_dict(t.to_dict()) == t
    True
    """

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"token": self.token, "logprob": self.logprob, "top": [list(p) for p in self.top]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TokenLogprob:
        # runs files hold hundreds of tokens per document, mostly the same few strings: interned,
        # a batch of documents keeps one copy of each token text
        return cls(
            intern(str(d["token"])),
            float(d["logprob"]),
            tuple((intern(str(t)), float(lp)) for t, lp in d.get("top", ())),
        )


@dataclass(frozen=True)
class Completion:
    """One LLM reply.

    Parameters
    ----------
    text : str
        The reply as generated.
    tokens : tuple of TokenLogprob or None
        The generated tokens, whose concatenation is ``text``; ``None`` when the provider gave no
        logprobs (downstream logprob features then become missing, never zero).
    model : str
        Model id as reported by the provider (or the GGUF name for the embedded model).
    usage : dict
        ``{"prompt_tokens": int, "completion_tokens": int}``.
    latency_s : float
        Wall-clock seconds of the call, retries included.
    finish_reason : str
        ``"stop"``, ``"length"``, ...

    Examples
    --------
    >>> c = Completion("{}", (TokenLogprob("{}", -0.1),), "m", {"prompt_tokens": 3}, 0.2, "stop")
    >>> Completion.from_dict(c.to_dict()) == c
    True
    """

    text: str
    tokens: tuple[TokenLogprob, ...] | None = None
    model: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    finish_reason: str = "stop"

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tokens": None if self.tokens is None else [t.to_dict() for t in self.tokens],
            "model": self.model,
            "usage": dict(self.usage),
            "latency_s": self.latency_s,
            "finish_reason": self.finish_reason,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Completion:
        toks = d.get("tokens")
        return cls(
            text=str(d.get("text", "")),
            tokens=None if toks is None else tuple(TokenLogprob.from_dict(t) for t in toks),
            model=str(d.get("model", "")),
            usage={k: int(v) for k, v in (d.get("usage") or {}).items()},
            latency_s=float(d.get("latency_s", 0.0)),
            finish_reason=str(d.get("finish_reason", "stop")),
        )


@runtime_checkable
class LLMClient(Protocol):
    """What every client offers.

    ``schema`` is a JSON schema the reply must follow (structured output / grammar), or None for
    free text. ``top_logprobs`` is k, the number of alternatives kept per token (0 = none).
    ``n`` > 1 returns several samples (used for self-consistency). Implementations time out
    every call and raise :class:`~confidence.errors.LLMError` after their retries are spent.
    """

    model: str

    def chat(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        logprobs: bool = True,
        top_logprobs: int = 5,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
    ) -> list[Completion]: ...
