"""The handout's figures as they appear in the page: the image, its alternative text and its caption.

Written once here in English and translated through the catalogs, so every
language's handout shows the same figures with captions in its own language
(the ``figure:<name>`` blocks of :mod:`autograder.deliver.handout.generate`).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.i18n import N_, _


@dataclass(frozen=True)
class Caption:
    alt: str
    text: str


FIGURE = N_("Figure {number}.")
CAPTIONS: dict[str, Caption] = {
    "workbench": Caption(  # a screenshot (autograder/deliver/handout/workbench_figure.py), not a matplotlib figure
        N_("The workbench page: stage 2 of the worked example, with a clicked score and the sum behind it"),
        N_(
            "`attnlab workbench` run on the reference solution: the score of içti against sütü clicked in stage 2. "
            "Your page shows your own numbers beside the chapter's."
        ),
    ),
    "worked_example": Caption(
        N_("Scaled scores and attention weights of the worked example, each cell with its value"),
        N_(
            "The worked example, computed by the reference `scaled_scores` and `attention`. Rows are the looking "
            "tokens; each row of weights sums to 1."
        ),
    ),
    "masks": Caption(
        N_("The three attention masks: bidirectional, causal, encoder-decoder"),
        N_(
            "Blue cells are True (may attend). Encoder-only models (BERT) see everything; decoder-only models (GPT, "
            "Llama) see the past; an encoder-decoder (T5) reads its source in full and writes its target causally. "
            "Strictly, the encoder-decoder picture is two stacks joined by cross-attention (queries from the decoder, "
            "keys and values from the encoder, an $m \\times n$ score matrix); it is drawn here as one matrix to show "
            "who can see whom."
        ),
    ),
    "sinusoidal": Caption(
        N_("The sinusoidal encoding as an image and as waves"),
        N_(
            "`sinusoidal_encoding(100, 64)`. The first dimensions change sign every few positions; the last ones "
            "barely move across the whole window. Fast dimensions tell near positions apart, slow ones far positions."
        ),
    ),
    "alibi": Caption(
        N_("ALiBi's bias for one head, and the penalty against distance for eight heads"),
        N_(
            "`alibi_bias(6, 0.5)` (the chapter's table) and the last row of `alibi_bias(64, m)` for each of "
            "`alibi_slopes(8)`."
        ),
    ),
    "moe_routing": Caption(
        N_("Six tokens routed top-2 over eight experts, and the experts' load"),
        N_(
            "`route` on six random tokens (a fixed seed) with 8 experts and $k = 2$: the gates of the chosen "
            "experts, and `expert_load`, each expert's share of the 12 (token, slot) pairs. Nothing stops a router "
            "from favouring a few experts; real models add a load-balancing loss or bias to prevent it."
        ),
    ),
    "kv_cache": Caption(
        N_("Prefill and decode, work per token with and without a cache, and the cache's size"),
        N_(
            "Left: the scores computed for a 5-token prompt and 3 generated tokens (prefill uses `causal_mask(5)`; "
            "decode step $t$ uses one row, `causal_mask(1, n_k)`). Top right: scores computed for the $t$-th token "
            "with a cache ($t$) and without one ($t(t+1)/2$, the whole prefix again). Bottom right: "
            "`kv_cache_bytes` for a 32-layer model with head width 128 in fp16."
        ),
    ),
    "loglog": Caption(
        N_("A sample log-log plot with fitted slopes, and per-token decoding latency"),
        N_(
            "A sample run of the reference's `time_attention` and `time_decoding` on the CPU named above the plot "
            "(one thread). Your numbers will differ; the shapes should not."
        ),
    ),
}
ORDER = tuple(CAPTIONS)  # figures are numbered in this order


def figure_markdown(name: str) -> str:
    """The image and its numbered caption, in the active language."""
    caption = CAPTIONS[name]
    number = ORDER.index(name) + 1
    return f"![{_(caption.alt)}](figures/{name}.png)\n\n*{_(FIGURE).format(number=number)} {_(caption.text)}*"
