"""Importing Ray lazily and starting it: embedded and local, or joining a cluster."""

from __future__ import annotations

import os
from typing import Any


def require_ray() -> Any:
    """The ``ray`` module with Ray Data, or an ImportError naming the extra to install.

    Examples
    --------
    >>> require_ray().__name__
    'ray'
    """
    try:
        import ray
        import ray.data
    except ImportError:
        raise ImportError("the Ray engine needs Ray Data: pip install 'extractconf[ray]'") from None
    return ray


def init_ray(address: str | None = None, num_cpus: int | None = None, *, quiet: bool = False):
    """Start Ray unless it already runs in this process; returns True when this call started it.

    ``address`` ``None`` starts an embedded local Ray (no dashboard, no usage report, nothing
    fetched from the network) with ``num_cpus`` CPUs (default: all); ``"auto"`` or
    ``"ray://HOST:10001"`` joins a running cluster (``ray start --head``, KubeRay).
    """
    ray = require_ray()
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report over the network
    kwargs: dict[str, Any] = {"log_to_driver": not quiet, "logging_level": "ERROR"}
    if address is None:
        # Ray lowers its workers to nice 15 by default; an embedded Ray stands in for the process
        # pool of --n-jobs, so its workers run at the user's priority (override: set the variable)
        os.environ.setdefault("RAY_worker_niceness", "0")
        # everything on the loopback interface: an embedded Ray talks to nobody else
        kwargs.update(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1")
    ray.init(address=address, **kwargs)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = not quiet
    ctx.print_on_execution_start = not quiet
    return True
