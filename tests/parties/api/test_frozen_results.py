"""Every public result of the API is frozen: assigning any name raises FrozenInstanceError (an
AttributeError), never the TypeError of a frozen ``slots=True`` dataclass on Python 3.11."""

from __future__ import annotations

import dataclasses

import pytest

import mpdp

FROZEN = sorted(name for name in mpdp.__all__ if isinstance(getattr(mpdp, name), type)
                and dataclasses.is_dataclass(getattr(mpdp, name))
                and getattr(mpdp, name).__dataclass_params__.frozen)


def test_the_exported_results_are_found() -> None:
    assert {"Accuracy", "Audit", "Composition", "Estimate", "Mechanism", "ReportFiles", "Simulation",
            "Sweep"} <= set(FROZEN)


@pytest.mark.parametrize("name", FROZEN)
@pytest.mark.parametrize("attribute", ["epsilon", "document", "anything_else"])
def test_assignment_raises_frozen_instance_error(name: str, attribute: str) -> None:
    result = object.__new__(getattr(mpdp, name))  # no field needed: __setattr__ refuses before it looks
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{attribute}'"):
        setattr(result, attribute, 2)
    with pytest.raises(AttributeError):
        delattr(result, attribute)


def test_a_composition_keeps_its_values() -> None:
    c = mpdp.compose(epsilon=0.1, delta=0.0, k=30)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.epsilon = 2  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.epsilons = (2.0,)  # type: ignore[misc]
    assert c.epsilons == (0.1,) and c.document["k"] == 30
