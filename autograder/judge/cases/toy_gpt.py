"""Cases of the toy GPT step: the kit's weights, the pieces, the forward pass and greedy generation.

The kit's toy model is ``toy_gpt.random_weights(**KIT_SIZE, seed=KIT_SEED)``,
saved as ``solutions/lab07_attention/toy_gpt_weights.npz`` (and shipped to
students as is). Its arrays travel in this module's snapshot too (case
``toy_gpt_weights``: the reference's ``load_weights()``, flattened in
:data:`WEIGHT_KEYS` order), so the public graders send students exactly the
weights of their file without the reference. Regenerate the file with::

    python -m autograder.judge.cases.toy_gpt --write-weights

then ``attnlab stubs`` (copies it to the assignment) and ``attnlab snapshot --module toy_gpt``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograder.base import tasks
from autograder.base.kit import Kit
from autograder.i18n import N_
from autograder.judge.cases import Case, expected
from autograder.judge.diagnose import toy_gpt as gpt_mistakes
from autograder.judge.diagnose import twin

KIT_SIZE = {"n_vocab": 16, "d_model": 8, "n_heads": 2, "n_layers": 2, "n_ctx": 16}
KIT_SEED = 16
KIT_WEIGHTS = (
    "the kit's weights"  # stands for them in a case's arguments; the case loads them from the reference's file
)
BLOCK_KEYS = ("ln1_g", "ln1_b", "W_Q", "W_K", "W_V", "W_O", "ln2_g", "ln2_b", "W1", "b1", "W2", "b2")
WEIGHT_KEYS = (
    "wte",
    "wpe",
    "lnf_g",
    "lnf_b",
    *(f"blocks.{i}.{key}" for i in range(KIT_SIZE["n_layers"]) for key in BLOCK_KEYS),
)

TOKENS = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]  # the digits of pi: 12 of the kit's 16 positions
PROMPT, N_NEW = [3, 1, 4, 1, 5], 8  # generation uses positions 0..11
KIT_TEXT = N_("the kit's weights (toy_gpt_weights.npz: 2 blocks of 2 heads, width 8, 16 tokens, 16 positions)")


def nested(flat: dict[str, np.ndarray], n_heads: int) -> dict[str, Any]:
    """The weights dict of ``toy_gpt.py`` from arrays named as in the ``.npz`` file (``blocks.<i>.<name>``)."""
    n_layers = len({key.split(".")[1] for key in flat if key.startswith("blocks.")})
    blocks = [{key: flat[f"blocks.{i}.{key}"] for key in BLOCK_KEYS} for i in range(n_layers)]
    return {**{key: flat[key] for key in ("wte", "wpe", "lnf_g", "lnf_b")}, "n_heads": int(n_heads), "blocks": blocks}


def flat(weights: dict[str, Any]) -> dict[str, np.ndarray]:
    """The arrays of a weights dict (NumPy or torch) named as in the ``.npz`` file, as float64 NumPy arrays."""
    arrays = {key: _numpy(weights[key]) for key in ("wte", "wpe", "lnf_g", "lnf_b")}
    for i, block in enumerate(weights["blocks"]):
        arrays.update({f"blocks.{i}.{key}": _numpy(block[key]) for key in BLOCK_KEYS})
    return arrays


def numpy_weights(weights: dict[str, Any]) -> dict[str, Any]:
    """A weights dict (e.g. the reference's torch one) with float64 NumPy arrays."""
    return nested(flat(weights), weights["n_heads"])


def kit_weights() -> dict[str, Any]:
    """The kit's toy model as NumPy arrays, from the snapshot (what ``toy_gpt.load_weights()`` gives)."""
    return nested(
        {key: expected("toy_gpt_weights", index) for index, key in enumerate(WEIGHT_KEYS)}, KIT_SIZE["n_heads"]
    )


def _numpy(value: Any) -> np.ndarray:
    if type(value).__module__.startswith("torch"):
        value = value.detach().cpu().double().numpy()
    return np.asarray(value, dtype=float)


def _torch(value: Any) -> Any:
    """NumPy arrays (in dicts and lists too) as float64 tensors; integer lists stay lists."""
    import torch

    if isinstance(value, dict):
        return {key: _torch(item) for key, item in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [_torch(item) for item in value]
    if isinstance(value, np.ndarray):
        return torch.as_tensor(value, dtype=torch.float64)
    return value


def _plain(value: Any) -> Any:
    """A reference result as NumPy: tensors and lists of ids become arrays, tuples stay tuples."""
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if type(value).__module__.startswith("torch"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


@dataclass(frozen=True)
class TorchCase(Case):
    """A case of ``toy_gpt.py`` (torch): NumPy arguments become float64 tensors, :data:`KIT_WEIGHTS` the kit's
    weights."""

    def run(self, ref, args: tuple | None = None, kwargs: dict | None = None) -> tuple[Any, dict[str, Any]]:
        kit = ref.toy_gpt.load_weights()
        given = self.args if args is None else args
        plain_args = tuple(numpy_weights(kit) if arg is KIT_WEIGHTS else arg for arg in given)
        result = getattr(ref.toy_gpt, self.function)(*(kit if arg is KIT_WEIGHTS else _torch(arg) for arg in given))
        return _plain(result), (self.variants(ref, *plain_args) if self.variants else {})

    def twin(self) -> tuple[tuple, dict] | None:
        """The twin of the call, the kit's weights among its arguments drawn again like any other floats (from the
        snapshot's copy of them, so that the public grader draws the same twin without the reference)."""
        if not any(arg is KIT_WEIGHTS for arg in self.args):
            return super().twin()
        return twin.inputs(tuple(kit_weights() if arg is KIT_WEIGHTS else arg for arg in self.args), self.kwargs)


@dataclass(frozen=True)
class WeightsCase(Case):
    """The kit's weights themselves, flattened in :data:`WEIGHT_KEYS` order (no wrong answers)."""

    def run(self, ref, args: tuple | None = None, kwargs: dict | None = None) -> tuple[Any, dict[str, Any]]:
        arrays = flat(ref.toy_gpt.load_weights())
        return [arrays[key] for key in WEIGHT_KEYS], {}

    def twin(self) -> tuple[tuple, dict] | None:
        return None


def _rng_inputs() -> dict[str, Any]:
    rng = np.random.default_rng(20260712)  # public, fixed: hidden checks draw their own
    d, n_heads = 8, 4
    four_heads = {key: rng.normal(size=(d, d)) / np.sqrt(d) for key in ("W_Q", "W_K", "W_V", "W_O")}
    return {
        "layer_norm": (
            rng.normal(size=(3, 8)) * np.array([[1.0], [0.02], [4.0]]) + 0.5,
            1 + 0.2 * rng.normal(size=8),
            0.2 * rng.normal(size=8),
        ),
        "gelu": np.concatenate([np.linspace(-5.0, 5.0, 21), rng.normal(size=11) * 2]),
        "attention_x": rng.normal(size=(5, d)),
        "four_heads": (rng.normal(size=(6, d)), four_heads, n_heads),
    }


INPUTS = _rng_inputs()


def _kit_block(ref) -> dict[str, np.ndarray]:
    return numpy_weights(ref.toy_gpt.load_weights())["blocks"][0]


@dataclass(frozen=True)
class KitBlockCase(TorchCase):
    """``causal_self_attention(x, <the kit's first block>, 2)``."""

    def run(self, ref, args: tuple | None = None, kwargs: dict | None = None) -> tuple[Any, dict[str, Any]]:
        x = (self.args if args is None else args)[0]
        block = _kit_block(ref)
        result = ref.toy_gpt.causal_self_attention(_torch(x), _torch(block), KIT_SIZE["n_heads"])
        return _plain(result), gpt_mistakes.attention_variants(ref, x, block, KIT_SIZE["n_heads"])


CASES: tuple[Case, ...] = (
    WeightsCase("toy_gpt_weights", "toy_gpt", "load_weights", ()),
    TorchCase("toy_gpt_layer_norm", "toy_gpt", "layer_norm", INPUTS["layer_norm"], gpt_mistakes.layer_norm_variants),
    TorchCase("toy_gpt_gelu", "toy_gpt", "gelu", (INPUTS["gelu"],), gpt_mistakes.gelu_variants),
    KitBlockCase("toy_gpt_attention_kit_block", "toy_gpt", "causal_self_attention", (INPUTS["attention_x"],)),
    TorchCase(
        "toy_gpt_attention_four_heads",
        "toy_gpt",
        "causal_self_attention",
        INPUTS["four_heads"],
        gpt_mistakes.attention_variants,
    ),
    TorchCase("toy_gpt_forward", "toy_gpt", "gpt_forward", (KIT_WEIGHTS, TOKENS), gpt_mistakes.gpt_forward_variants),
    TorchCase("toy_gpt_cached", "toy_gpt", "gpt_forward", (KIT_WEIGHTS, TOKENS), gpt_mistakes.cached_step_variants),
    TorchCase("toy_gpt_generate", "toy_gpt", "generate", (KIT_WEIGHTS, PROMPT, N_NEW), gpt_mistakes.generate_variants),
)


def write_weights(folder: Path) -> Path:
    """Write the kit's toy model, ``random_weights(**KIT_SIZE, seed=KIT_SEED)``, to ``folder/toy_gpt_weights.npz``."""
    from autograder.base.reference import Reference

    ref = Reference(folder, tasks.modules_present(folder))
    path = Path(folder) / "toy_gpt_weights.npz"
    ref.toy_gpt.save_weights(ref.toy_gpt.random_weights(**KIT_SIZE, seed=KIT_SEED), path)
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write-weights", action="store_true", help="write toy_gpt_weights.npz into the reference folder"
    )
    parser.add_argument("--reference", default=str(Kit.source_tree().solutions))
    options = parser.parse_args()
    if options.write_weights:
        print(f"wrote {write_weights(Path(options.reference))}")
