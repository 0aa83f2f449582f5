"""Every value the contract allows is read (issue 32): torch tensors of any dtype cross the process boundary, and the
predictions step takes whatever the student's own code returns."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autograder.sandbox import protocol
from autograder.sandbox.probes.predictions import own_value

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64, torch.int64])
def test_a_tensor_of_any_dtype_crosses_as_its_values(dtype) -> None:
    tensor = torch.tensor([[0.5, -1.25], [3.0, 0.125]]).to(dtype)
    arrays: list[np.ndarray] = []
    tree = protocol.encode((tensor, [tensor[0]]), arrays)
    back = protocol.decode(tree, arrays)
    np.testing.assert_array_equal(np.asarray(back[0], dtype=float), tensor.double().numpy())
    np.testing.assert_array_equal(np.asarray(back[1][0], dtype=float), tensor[0].double().numpy())


class _Module:
    def __init__(self, **functions) -> None:
        self.__dict__.update(functions)
        self.__file__ = "/nowhere/scaling.py"


@pytest.mark.parametrize(
    "returned",
    [
        lambda: (torch.ones(2, 3, dtype=torch.bfloat16), torch.full((2, 2), 0.5)),
        lambda: (np.ones((2, 3)), np.float32(0.5)),
        lambda: (torch.ones(2, 3, dtype=torch.float16), torch.Size([2, 2])),
    ],
    ids=["bfloat16_tensors", "numpy_scalar", "float16_and_size"],
)
def test_the_predictions_step_reads_what_the_students_code_returns(returned) -> None:
    modules = {"scaling": _Module(attention=lambda *a, **k: returned())}
    reply = own_value(modules.__getitem__, "ref.scaling.attention(1, 2, 3)", json.dumps({"_inputs": {}}))
    assert reply["status"] == "ok", reply
    expected = returned()
    got = reply["value"]
    assert len(got) == 2
    first = expected[0].double().numpy() if isinstance(expected[0], torch.Tensor) else expected[0]
    np.testing.assert_allclose(np.asarray(got[0], dtype=float), np.asarray(first, dtype=float))
