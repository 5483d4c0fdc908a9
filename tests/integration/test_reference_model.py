"""The reference-model test: random sequences of uploads, publishes, LATEST writes, alias writes, canaries,
rollbacks, deletes and restores, tags, alias policies, promotions and approvals by several identities, and
retention, sent to the real handlers (moto in process) and compared, answer by answer and invariant by
invariant, with the model of the contract in tests/model. Shrunk counterexamples it found are kept as plain
tests in test_model_regressions.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis.stateful import run_state_machine_as_test

from tests.model import profiles
from tests.model.machine import ArcaMachine, GuardMachine, World


@pytest.mark.parametrize("machine", [ArcaMachine, GuardMachine], ids=["whole", "guarded-promotion"])
def test_the_handlers_answer_as_the_reference_model(aws: SimpleNamespace, machine: type[ArcaMachine]) -> None:
    world = World(aws)
    run_state_machine_as_test(lambda: machine(world), settings=profiles.chosen())
    # What the run covered, and which pending rules (tests/model/pending.py) the unfixed code was seen to break.
    print(f"pending rules met: {dict(world.tolerated)}")
    print(f"answers: {world.coverage()}")
