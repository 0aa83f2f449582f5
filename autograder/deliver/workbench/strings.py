"""Every sentence the workbench page shows, marked for the catalogs and handed to the page translated.

The page's script holds no sentence of its own: it looks each one up by key
in :func:`texts` (filled in the active language when the page is written) and
fills the ``{name}`` fields with numbers from the data. Code (``scores(Q, K)``)
and token names stay as they are.

A sentence whose words follow a count (``12 tokens``; Russian has three forms)
is in :data:`COUNTED` instead: the page gets all of its forms in the active
language (:func:`counted`) and the catalog's plural rule
(:mod:`autograder.deliver.workbench.plurals`), and the script picks the form for the
count it shows. A sentence with two counts follows one of them, and the other
is a counted phrase (``{count} block``) put into it, so each count gets its own
form. A count after a label (``with a problem: 2``) or a position (``Stage 3 of
8``) has no words that follow it and stays in :data:`TEXT`.
"""

from __future__ import annotations

from autograder.deliver.workbench import plurals
from autograder.i18n import N_, Nn_, _

TEXT: dict[str, str] = {
    # the page's frame
    "title": N_("Attention workbench: {folder}"),
    "lead": N_(
        "Every number marked yours on this page was computed by your own functions, in the grading sandbox, when "
        "you ran attnlab workbench; run it again after you change your code. The chapter's printed values stand "
        "beside them. Click a cell (or move to it with the arrow keys and press Enter) to see how it is made."
    ),
    "footer": N_(
        "Written by attnlab {version} for the folder {folder} (isolation: {isolation}). The page works offline "
        "and runs none of your code: every result was computed ahead of time."
    ),
    "noscript": N_("This page needs JavaScript to draw its views. It runs offline: nothing is downloaded."),
    "summary": N_(
        "Views computed by your code: {ok} of {total}; waiting for functions you have not written yet: {todo}; "
        "with a problem: {problem}."
    ),
    "tabs_label": N_("Views"),
    "time_label": N_("Time control"),
    "tab_stages": N_("Eight stages"),
    "tab_calibrator": N_("Calibrator"),
    "tab_tracker": N_("Token tracker"),
    "tab_lens": N_("Head lens"),
    "tab_cache": N_("Prefill and decode"),
    "tab_predict": N_("Predict, then test"),
    # the time control
    "step_back": N_("Back"),
    "step_forward": N_("Forward"),
    "play": N_("Play"),
    "pause": N_("Pause"),
    "time_stage": N_("Stage {k} of {n}"),
    "time_position": N_("Position {k} (of 0 to {n})"),
    "time_step": N_("Decode step {k} (of 0 to {n})"),
    "time_none": N_("This view has no steps to play."),
    "keys_help": N_("Keys: [ and ] step back and forward, p plays or pauses; arrow keys move between cells."),
    # problems, and what a view will show
    "not_written": N_("Not written yet: {text}."),
    "will_show": N_("When it is, this view will show {what}."),
    "problem_is": N_("This view cannot show your result: {text}."),
    "read_section": N_("Read the handout, section '{section}' ({link})."),
    "no_values": N_("no values"),
    "none_yet": N_("none yet"),
    "matches_chapter": N_("matches the chapter"),
    "differs_chapter": N_("differs from the chapter"),
    "your_value": N_("Yours, {call}[{where}]: {value}"),
    "chapter_value": N_("The chapter's [{where}]: {value}"),
    "row_sum": N_("row sum"),
    "low": N_("low"),
    "high": N_("high"),
    # the eight stages
    "stages_label": N_("The eight stages of the worked example"),
    "stage_heading": N_("Stage {number}: {title}"),
    "stage_products": N_("Q × K"),
    "stage_sum": N_("Sum"),
    "stage_scale": N_("Scale"),
    "stage_mask": N_("Causal mask"),
    "stage_softmax": N_("Row softmax"),
    "stage_mixing": N_("Mix the values"),
    "stage_concat": N_("Concatenate heads"),
    "stage_projection": N_("Output projection"),
    "stage_products_text": N_(
        "Each cell of QKᵀ compares one query row with one key row of the worked example (kedi sütü içti, "
        "d_k = 2). Click a cell to see every product. Every stage calls your function on the chapter's inputs "
        "for that stage, as the checks do, so a mistake shows in the stage where it is made."
    ),
    "stage_sum_text": N_(
        "The products of a query and a key add up to one score. A score is not a probability yet: it can be any number."
    ),
    "stage_scale_text": N_(
        "Dividing by √d_k keeps the scores' spread the same whatever the head's width. Here √2 = 1.4142."
    ),
    "stage_mask_text": N_(
        "Future positions are not available yet. The causal mask turns their scores into −∞, which become "
        "weights of exactly 0 after the softmax."
    ),
    "stage_softmax_text": N_(
        "The softmax normalises each row along the key columns, not the whole matrix: every row sums to 1."
    ),
    "stage_mixing_text": N_(
        "Each output row is a weighted sum of the value rows. The attention weights and the values' contributions "
        "are two different things. Click an output to see its weighted sum."
    ),
    "stage_concat_text": N_(
        "The chapter's second head reads the same three tokens differently. The two outputs of width 2 are put "
        "side by side, [head 1 | head 2], back to width 4."
    ),
    "stage_projection_text": N_(
        "The output projection W_O mixes the heads' features before the residual add: each output column is a "
        "weighted sum of all four concatenated columns."
    ),
    "stage_products_what": N_("your projections Q, K and V beside the chapter's"),
    "stage_sum_what": N_("your scores QKᵀ beside the chapter's, and how each one is summed"),
    "stage_scale_what": N_("your scaled scores beside the chapter's"),
    "stage_mask_what": N_("your causal mask, your masked scores with their −∞, and the exact zeros they become"),
    "stage_softmax_what": N_("your attention weights with their row sums, beside the chapter's"),
    "stage_mixing_what": N_("your outputs, and the weighted sum behind each one"),
    "stage_concat_what": N_("both heads' outputs side by side, beside the chapter's table"),
    "stage_projection_what": N_("your multi-head output after W_O, beside the chapter's"),
    "queries_q": N_("Queries Q (the chapter's)"),
    "keys_k": N_("Keys K (the chapter's)"),
    "values_v": N_("Values V (the chapter's)"),
    "click_a_cell": N_("QKᵀ: click a cell"),
    "your_project_q": N_("Your project(X, W_Q, W_K, W_V): Q"),
    "your_project_k": N_("Your project(X, W_Q, W_K, W_V): K"),
    "products_of": N_("Query {query} against key {key}, product by product:"),
    "products_next": N_("The next stage adds these products up."),
    "your_scores": N_("Your scores(Q, K)"),
    "chapter_scores": N_("The chapter's QKᵀ"),
    "sum_of": N_("The score of query {query} against key {key} is the sum of the products:"),
    "sum_note": N_(
        "In the chapter's table the largest score, 2.97, is içti looking at sütü: the verb finds its object."
    ),
    "your_scaled": N_("Your scaled_scores(Q, K)"),
    "chapter_scaled": N_("The chapter's QKᵀ / √d_k"),
    "scale_by": N_("Your score divided by √d_k = {root}:"),
    "your_mask": N_("Your causal_mask(3) (True: may attend)"),
    "your_masked": N_("Your apply_mask(S, causal_mask)"),
    "your_masked_weights": N_("Your attention weights with the causal mask"),
    "mask_allowed": N_("{query} may look at {key} (the same or an earlier position): its score is kept."),
    "mask_blocked": N_("{key} comes after {query}: its score becomes −∞ and its weight must be exactly 0."),
    "exactly_zero": N_("Exactly 0, as it must be."),
    "not_exactly_zero": N_("Not exactly 0 ({value}): a masked weight must be exactly 0 (−∞ before the softmax)."),
    "your_weights": N_("Your attention weights"),
    "chapter_weights": N_("The chapter's attention weights A"),
    "softmax_row": N_("Row {query}: the exponential of each scaled score, divided by the row's sum:"),
    "your_output": N_("Your output"),
    "chapter_output": N_("The chapter's output AV"),
    "weighted_sum": N_("Output of {query}, column {column}: its weights times the values' column {column}:"),
    "weights_not_contributions": N_(
        "A large weight on a small value contributes little: the weight says how much is taken, the value what is "
        "taken."
    ),
    "head_output": N_("Your head {head} output"),
    "your_concat": N_("Your multi_head(X, heads, I): the concatenation"),
    "chapter_concat": N_("The chapter's Concat(head 1, head 2)"),
    "concat_from": N_("Column {column} comes from head {head}, its column {head_column}:"),
    "head_value": N_("head {head}:"),
    "w_o": N_("W_O (the chapter's)"),
    "your_projected": N_("Your multi_head(X, heads, W_O)"),
    "chapter_projected": N_("The chapter's MultiHead(X)"),
    "projection_of": N_("Output of {query}, column {column}: the concatenated row times column {column} of W_O:"),
    # the calibrator
    "calibrator": N_("Calibrator: change a condition, predict, then test"),
    "calibrator_text": N_(
        "Change one condition of the worked example's head; before the result is shown, predict which key the "
        "last token now favours. Every combination was computed ahead of time by your attention: a temperature T "
        "is your attention on Q / T, and no scaling is your attention on Q × √d_k, which cancels your division."
    ),
    "calibrator_what": N_("your attention weights under every condition you choose"),
    "cal_scale": N_("divide by √d_k"),
    "cal_mask": N_("causal mask"),
    "cal_temperature": N_("temperature T"),
    "cal_token": N_("token at position {position}:"),
    "cal_predict_first": N_("predict before each result"),
    "cal_sentence": N_("Sentence: {sentence}"),
    "cal_question": N_("Before you look: which key gets the largest weight in the last row ({token}) now?"),
    "cal_right": N_(
        "You predicted {guess}; your attention gives {winner} the largest weight ({weight}). You were right."
    ),
    "cal_wrong": N_("You predicted {guess}; your attention gives {winner} the largest weight ({weight})."),
    "cal_baseline": N_("For comparison: scaled, no mask, T = 1, içti"),
    # the toy GPT
    "block": N_("block"),
    "head": N_("head"),
    "block_n": N_("block {n}"),
    "head_n": N_("head {n}"),
    "position_token": N_("position {position}, token {token}"),
    "tracker": N_("Token tracker"),
    "tracker_what": N_("lines from each position to the earlier positions it attends to, in every block and head"),
    "tracker_picture": N_("attention lines from position {position}"),
    "tracker_row": N_("The weights of position {position}"),
    "tracker_future": N_(
        "Your weights give later positions ({positions}) a weight above 0, drawn dashed: a causal model must not "
        "see them."
    ),
    "tracker_how": N_(
        "Each head's weights are your attention (step 2) with the causal mask, on that head's queries and keys of "
        "what your gpt_forward gave your causal_self_attention in that block. Tokens are shown as position:id."
    ),
    "lens": N_("Head lens: two heads side by side"),
    "lens_what": N_("both heads' attention weights side by side"),
    "lens_source": N_("show"),
    "lens_gpt": N_("toy GPT, {block}"),
    "lens_worked": N_("the worked example's two heads"),
    "lens_worked_note": N_(
        "The chapter's head 1 asks who my arguments are; head 2 asks which verb governs me. Both unmasked, as in "
        "the chapter."
    ),
    "lens_cell": N_("Query {query}, key {key}: head 1 gives {one}, head 2 gives {two}."),
    "cache": N_("Prefill and decode with the KV cache"),
    "cache_what": N_("your logits step by step beside prefill's, and what every head's cache holds after each step"),
    "decode_step": N_("Step {step}: token {token}"),
    "prefill_row": N_("Prefill, gpt_forward: every row of the logits at once (row {step} marked)"),
    "decode_row": N_("Decode, gpt_step at step {step}: its logits"),
    "same_logits": N_("The same logits (largest difference {gap})."),
    "different_logits": N_("Not the same logits: the largest difference is {gap}."),
    "cache_lengths": N_("After step {step}, len() of every head's cache: {lengths}."),
    "cache_keys": N_("Cached keys of this head"),
    "cache_values": N_("Cached values of this head"),
    "cache_newest": N_("The last row is the one this step added; the rows above it were kept from earlier steps."),
    "generation": N_("Greedy generation"),
    "generation_what": N_(
        "the tokens your generate picks with the cache (gpt_step only) and without it (gpt_forward only)"
    ),
    "generated_cache": N_("With the cache, after {prompt}: {tokens} (through gpt_step only)."),
    "generated_no_cache": N_("Without it, after {prompt}: {tokens} (through gpt_forward only)."),
    # predict, then test
    "predict": N_("Predict, then test"),
    "predict_text": N_(
        "Write down what you expect first. Your prediction is kept on this computer only (in the browser's "
        "storage, if it allows); then the page shows what your own code computed, and the chapter's value where "
        "the chapter prints one. These are not graded."
    ),
    "your_prediction": N_("Your prediction:"),
    "record_and_test": N_("Record my prediction and test it"),
    "number_hint": N_("Type a number, such as 0.25, 1000 or 1e6; then the button records it."),
    # TRANSLATORS: {text} is what the student typed in the number field.
    "not_a_number": N_("“{text}” is not a number yet: type one such as 0.25, 1000 or 1e6."),
    "earlier_prediction": N_("Your earlier prediction was kept on this computer."),
    "you_predicted": N_("You predicted: {prediction}."),
    "no_answer_yet": N_("Your code has no answer to this yet:"),
    "prediction_matches": N_("Your prediction matches what your code computed."),
    "prediction_differs": N_(
        "Your code computed something else than you predicted: one of the two is worth a second look."
    ),
    "exp_value_row": N_("Which value row wins?"),
    "exp_value_row_question": N_(
        "In the worked example, the output of içti is a weighted sum of the three value rows. Which token's "
        "value row gets the largest weight?"
    ),
    "exp_value_row_what": N_("your weights of the içti row"),
    "exp_value_row_yours": N_("Your attention gives {token} the largest weight, {weight} (the row: {weights})."),
    "exp_value_row_chapter": N_("The chapter's row: {weights}."),
    "exp_drop_scale": N_("What does dropping √d_k do?"),
    "exp_drop_scale_question": N_(
        "64 random keys compete for one query, with d_k = 64. Divided by √d_k, the winning key gets about a tenth "
        "of the weight. Without the division, will the winner's weight be clearly larger, about the same, or "
        "clearly smaller?"
    ),
    "drop_larger": N_("clearly larger"),
    "drop_same": N_("about the same"),
    "drop_smaller": N_("clearly smaller"),
    "exp_drop_scale_what": N_("the winner's mean weight from your scores, scaled_scores and softmax"),
    "exp_drop_scale_chapter": N_("The chapter's experiment: {scaled} with the division, {unscaled} without it."),
    "exp_mask_first_row": N_("What does the mask do to the first row?"),
    "exp_mask_first_row_question": N_(
        "With the causal mask on the worked example, what weight does kedi, the first token, give itself?"
    ),
    "exp_mask_first_row_what": N_("your attention weights with the causal mask"),
    "exp_mask_first_row_yours": N_("Your attention gives kedi the weights {weights}: {self} on itself; {zeros}"),
    "zeros_exact": N_("the other two are exactly 0."),
    "zeros_not_exact": N_("the other two are not exactly 0, as they must be."),
    "exp_scores_1024": N_("How many scores does a 1,024-token context have?"),
    "exp_scores_1024_question": N_("One head of one layer reads 1,024 tokens. How many scores does it compute in QKᵀ?"),
    "exp_scores_1024_what": N_("the shape of what your scores returns for 1,024 tokens"),
    "exp_cache_length": N_("How long is the cache?"),
    "exp_cache_length_question": N_(
        "The toy GPT decodes 12 tokens one at a time. Afterwards, how many keys does each head's cache hold?"
    ),
    "exp_cache_length_what": N_("len() of every head's cache after decoding"),
}

# Sentences with a count, as (singular, plural); the script shows them with the count (T(key, values, count)).
COUNTED: dict[str, tuple[str, str]] = {
    # counted phrases that go into a sentence's fields
    "n_blocks": Nn_("{count} block", "{count} blocks"),
    "n_heads": Nn_("{count} head", "{count} heads"),
    "n_keys": Nn_("{count} key", "{count} keys"),
    # the toy GPT's views: the form follows {n}, the number of tokens; {blocks} and {heads} are counted phrases
    "tracker_text": Nn_(
        "The toy GPT ({blocks}, {heads}, width {width}, vocabulary {vocabulary}) reads {n} token. Pick a position: "
        "its lines go to the positions it attends to, thicker for a larger weight. Only the current and earlier "
        "positions may get a line; another head can have another pattern.",
        "The toy GPT ({blocks}, {heads}, width {width}, vocabulary {vocabulary}) reads {n} tokens. Pick a position: "
        "its lines go to the positions it attends to, thicker for a larger weight. Only the current and earlier "
        "positions may get a line; another head can have another pattern.",
    ),
    "lens_text": Nn_(
        "The two heads of one block look at the same {n} token of the toy GPT in their own ways. Pick a cell in "
        "either to compare the same query and key in both.",
        "The two heads of one block look at the same {n} tokens of the toy GPT in their own ways. Pick a cell in "
        "either to compare the same query and key in both.",
    ),
    "cache_text": Nn_(
        "Prefill runs the {n} token through your gpt_forward at once. Decode runs it through your gpt_step and its "
        "KV cache: each step's logits must equal prefill's row, and after step t every head's cache holds the keys "
        "and values of tokens 0 to t. Step through them with the time control.",
        "Prefill runs all {n} tokens through your gpt_forward at once. Decode runs them one at a time through "
        "your gpt_step and its KV cache: each step's logits must equal prefill's row, and after step t every "
        "head's cache holds the keys and values of tokens 0 to t. Step through them with the time control.",
    ),
    # the experiments: the form follows {trials}, {count}, {millions} and {steps}; {keys} and {length} are
    # counted phrases ("64 keys")
    "exp_drop_scale_yours": Nn_(
        "With your code, over {trials} query ({keys} each, d_k = {d_k}): the winner's mean weight is {scaled} "
        "with the division and {unscaled} without it. Without it the softmax saturates.",
        "With your code, over {trials} queries ({keys} each, d_k = {d_k}): the winner's mean weight is {scaled} "
        "with the division and {unscaled} without it. Without it the softmax saturates.",
    ),
    "exp_scores_1024_yours": Nn_(
        "Your scores returned a {n} × {n} matrix: {count} score for one head. Your causal_mask({n}) lets "
        "{allowed} of it through.",
        "Your scores returned a {n} × {n} matrix: {count} scores for one head. Your causal_mask({n}) lets "
        "{allowed} of them through.",
    ),
    "exp_scores_1024_chapter": Nn_(
        "The chapter: {millions} million ({count}) for one head at n = 1,024.",
        "The chapter: {millions} million ({count}) for one head at n = 1,024.",
    ),
    "exp_cache_length_yours": Nn_(
        "After your {steps} decode step, your caches hold {length} ({lengths}).",
        "After your {steps} decode steps, your caches hold {length} ({lengths}).",
    ),
}


def texts() -> dict[str, str]:
    """Every sentence without a count in the active language, by key."""
    return {key: _(text) for key, text in TEXT.items()}


def counted() -> dict[str, list[str]]:
    """Every form of each sentence with a count in the active language, by key, in the catalog's order."""
    return {key: plurals.forms(pair) for key, pair in COUNTED.items()}
