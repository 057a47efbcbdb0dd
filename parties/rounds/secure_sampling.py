"""Deployment mode's sampler (the OS CSPRNG, :mod:`mpdp.protocols.randomization.secure`), found once for every
protocol's parties: a worker or party host asks for it before any party connects, so a build without it fails
in one line, not in each party."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["Sampler", "secure_sampler"]

#: ``(mechanism, bit, size) -> size`` output symbols (uint8) of one party's randomized response.
Sampler = Callable[[RandomizedResponse, int, int], NDArray[np.uint8]]


def secure_sampler() -> Sampler:
    """``mpdp.protocols.randomization.secure.sample_secure(mechanism, bit, size)``, the deployment-mode sampler.

    Raises:
        ParameterError: ``secure`` asked for but :mod:`mpdp.protocols.randomization.secure` is not in this build.
    """
    try:
        from mpdp.protocols.randomization.secure import (
            sample_secure,  # the lead's exact CSPRNG sampler
        )
    except ImportError as exc:
        raise ParameterError(
            "secure", True, "simulation mode (secure=False): protocols.randomization.secure is not available", hint=str(exc)
        ) from exc
    return sample_secure
