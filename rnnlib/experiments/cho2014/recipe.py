"""The set-up beside the paper's: each setting, paper A's value, this run's and its parameters."""

from __future__ import annotations

import dataclasses

import pandas as pd

from ...book import papers
from ...presets import preset
from ...train import TRAIN_PRESETS, TrainConfig
from .rows import MERT_START_SD, BaselineRow, RNNRow, extra_start
from .setting import Params


def _set_up(t: TrainConfig) -> str:
    clip = "no clipping" if t.clip_norm is None else f"L2 norm clipped at {t.clip_norm:g}"
    return f"{t.optimizer} (ε {t.eps:g}, ρ {t.rho:g}), {t.batch_size} {t.batching} pairs, {clip}"


def recipe_table(base: BaselineRow, rnn: RNNRow, P: Params) -> pd.DataFrame:
    """Paper A's set-up beside this run's (index: setting; columns ``Cho et al. 2014``,
    ``this run`` and the chapter ``parameters`` that set it): paper A's sizes and training as
    the library keeps them (the presets ``paper-cho2014`` and ``paper-a``)."""
    mc, tc, art = rnn.scorer.model_config, rnn.scorer.train_config, rnn.scorer.artifact
    pm, pt = preset("paper-cho2014"), dataclasses.replace(tc, **TRAIN_PRESETS["paper-a"])
    data, seeds = base.data, P.mert_seeds
    tune = (
        len(data.dev_src) if P.tune_sentences is None else min(P.tune_sentences, len(data.dev_src))
    )
    cslm_sizes = f"{P.cslm_order}-gram, {P.cslm_emb}, {P.cslm_hidden1} and {P.cslm_hidden2}"
    recipe = [
        ("corpus", "WMT'14 English→French (the network: the phrase table of 348M words)",
         f"{P.corpus}: {len(data.train_src):,} training pairs", "corpus, max_train"),
        ("pairs the network trains on", "every unique pair of the phrase table",
         f"{len(rnn.scorer.train_pairs):,} of the {len(rnn.scorer.all_pairs):,} unique pairs "
         + ("(all but the held-out ones)" if P.rnn_sample is None else "(drawn with the seed)"),
         "rnn_sample, seed"),
        ("shortlists (source / target)", f"{pm.src_vocab:,} / {pm.tgt_vocab:,}",
         f"{mc.src_vocab:,} / {mc.tgt_vocab:,}", "src_vocab, tgt_vocab"),
        ("hidden units, embedding rank, maxout units", f"{pm.hidden}, {pm.emb}, {pm.maxout}",
         f"{mc.hidden}, {mc.emb}, {mc.maxout}", "model_preset"),
        ("optimiser, minibatch", _set_up(pt) + " (clipping: none stated)", _set_up(tc),
         "rnn_optimizer, rnn_lr, rnn_clip"),
        ("model selection", "not stated",
         "the parameters of the lowest held-out NLL among the evaluations", "rnn_eval_every"),
        ("the feature", "the network's score of each pair (Eq. 9; normalisation not stated)",
         "log p(t|s) summed over the target words and <end>"
         + (" and, in its own row, divided by them" if rnn.runs_per_word else ""),
         "per_word_row"),
        ("training length", "about three days",
         f"{int(art.extra['updates']):,} updates ({art.extra['epochs']:.2f} passes)",
         "rnn_updates"),
        ("CSLM: order, projection, rectified layers", "7-gram, 512, 1536 and 1024", cslm_sizes,
         "cslm_order, cslm_emb, cslm_hidden1, cslm_hidden2"),
        ("CSLM: training",
         f"target side and {papers.A_CSLM_NEWS_MWORDS}M words of news, until the dev perplexity "
         "stopped improving",
         f"target side of the training pairs, {P.cslm_updates:,} Adam updates "
         f"(lr {P.cslm_lr:g})", "cslm_updates, cslm_lr"),
        ("CSLM: use", "scores partial translations in the search",
         f"rescores {P.eval_nbest}-best lists (mode {P.rescore_mode})",
         "rescore_mode, eval_nbest"),
        ("CSLM rows: MERT", "MERT's loop, decoding with the CSLM in the search",
         "one more MERT on the fixed n-best lists of the base row's tuned weights, no decoding"
         if P.rescore_mode == "lists"
         else "MERT's loop, each decoding's n-best lists rescored by the CSLM",
         "rescore_mode, rescore_iterations"),
        ("phrase-based system", "Moses, default settings",
         f"the book's: {P.lm_order}-gram LM, stack {P.stack_size}, {P.ttable_limit} "
         f"options a span, distortion {P.distortion_limit}",
         "lm_order, stack_size, ttable_limit, distortion_limit"),
        ("MERT", "newstest2012+2013, one run a row",
         f"the first {tune:,} dev sentences, {seeds} seed{'s' * (seeds != 1)} a row, at most "
         f"{P.mert_iterations} iterations, {P.mert_restarts} random restarts; each seed from "
         f"its own start (the defaults times exp(N(0, {MERT_START_SD:g}²))) and streams",
         "tune_sentences, mert_seeds, mert_iterations, mert_restarts"),
        ("MERT's start for the +RNN rows", "not stated (Moses: its default weights)",
         "the Baseline's tuned weights, the new weight at 0, read against the Baseline "
         "tuned on as long from the same weights"
         + (f"; in a row of its own, the decoder's defaults (the new weight at "
            f"{extra_start():g}), seeds 1 to {len(rnn.runs_defaults)}"
            if rnn.runs_defaults else "")
         if P.mert_start == "baseline"
         else f"the decoder's defaults, the new weight at {extra_start():g}",
         "mert_start, mert_default_seeds"),
        ("dev and test sets", "newstest2012+2013; newstest2014 (3,003 sentences)",
         f"{len(data.dev_src):,} dev and {len(data.test_src):,} test sentences", "max_eval"),
        ("Table 1's dev BLEU", "the dev set, which MERT tuned on",
         f"the {tune:,} tuning sentences, and the other {len(data.dev_src) - tune:,} dev "
         "sentences apart (held out; the claims' dev halves read these)"
         if tune < len(data.dev_src)
         else "the dev set, which MERT tuned on", "tune_sentences, max_eval"),
        ("Fig. 3, Tables 2 and 3: the pairs read", "the whole phrase table",
         "the pairs of the source phrases of the dev and test sentences (those the decoder can "
         "use)", "max_eval"),
    ]  # fmt: skip
    columns = ["setting", "Cho et al. 2014", "this run", "parameters"]
    return pd.DataFrame(recipe, columns=columns).set_index("setting")
