"""The LLM options of ``extract``, ``score`` and ``demo``, checked before any work.

``--llm`` names the client (``local``, ``local:PATH.gguf``, ``openai:MODEL``, an ``http(s)://``
URL, ``replay:PATH``), ``--llm-model`` the model id served at a URL (``--model`` is always the
confidence model folder), ``--llm-timeout`` / ``--llm-retries`` bound each call to a remote
endpoint, ``--llm-api-key-env`` names the variable holding its key, and ``--doc-timeout`` bounds
all the calls of one document together.
"""

from __future__ import annotations

import argparse
import os

from confidence.cli._args import non_negative_int, positive_float
from confidence.errors import DatasetError, ExtractConfError

_REMOTE_ONLY = ("llm_timeout", "llm_retries", "llm_api_key_env")


def add_llm_args(p: argparse.ArgumentParser, *, default: str = "local") -> None:
    g = p.add_argument_group("LLM")
    g.add_argument(
        "--llm",
        default=default,
        help=f"local | local:PATH.gguf | openai:MODEL | http(s)://URL | replay:PATH "
        f"(default {default})",
    )
    g.add_argument(
        "--llm-model", default=None, metavar="NAME", help="model id served at a URL endpoint"
    )
    g.add_argument(
        "--llm-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="remote endpoints: seconds per attempt (default 60)",
    )
    g.add_argument(
        "--llm-retries",
        type=non_negative_int,
        default=None,
        metavar="N",
        help="remote endpoints: retries of a failed call (timeouts, 429, 5xx; default 5)",
    )
    g.add_argument(
        "--llm-api-key-env",
        default=None,
        metavar="NAME",
        help="remote endpoints: environment variable holding the API key (default "
        "OPENAI_API_KEY for openai:, EXTRACTCONF_LLM_API_KEY for a URL)",
    )
    g.add_argument(
        "--doc-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="all LLM calls of one document together; past it the document is partial or "
        "failed (default: no limit)",
    )


def llm_options(args) -> dict:
    """Check the LLM options; the keyword arguments for :func:`confidence.llm.make_client`."""
    from confidence.llm import REMOTE_SCHEMES, check_spec

    try:
        scheme = check_spec(args.llm, model=args.llm_model)
    except ValueError as e:
        raise DatasetError(f"--llm {args.llm}: {e}") from None
    given = {k: getattr(args, k) for k in _REMOTE_ONLY if getattr(args, k) is not None}
    if given and scheme not in REMOTE_SCHEMES:
        names = ", ".join("--" + k.replace("_", "-") for k in given)
        raise DatasetError(f"{names}: only for remote endpoints (openai:MODEL, http(s)://URL)")
    env = given.get("llm_api_key_env")
    if env is not None and not os.environ.get(env):
        raise DatasetError(f"--llm-api-key-env {env}: that environment variable is not set")
    kw = {}
    if "llm_timeout" in given:
        kw["timeout"] = given["llm_timeout"]
    if "llm_retries" in given:
        kw["max_retries"] = given["llm_retries"]
    if env is not None:
        kw["api_key_env"] = env
    return kw


def make_llm(args, **extra):
    """The client ``args`` ask for (``extra`` goes to its constructor); a one-line error if not."""
    from confidence.llm import make_client

    kw = llm_options(args)
    try:
        return make_client(args.llm, model=args.llm_model, **kw, **extra)
    except (ValueError, ImportError, OSError) as e:
        raise ExtractConfError(f"--llm {args.llm}: {e}") from None
