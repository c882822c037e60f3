"""The papers' own numbers, transcribed once from the papers' text.

These are the only numbers of the book that are not computed: they are what the regenerated
tables are set beside. Each constant names the table it comes from.

* A: Cho et al. 2014, arXiv:1406.1078v3. B: Bahdanau, Cho & Bengio 2015, arXiv:1409.0473v7
  (Reading the papers, ``reading-paper-versions``).
"""

from __future__ import annotations

# A, Table 1: BLEU on newstest2012+2013 (dev, used for MERT) and newstest2014 (test).
A_TABLE1 = {
    "Baseline": {"dev": 30.64, "test": 33.30},
    "RNN": {"dev": 31.20, "test": 33.87},
    "CSLM + RNN": {"dev": 31.48, "test": 34.64},
    "CSLM + RNN + WP": {"dev": 31.50, "test": 34.54},
}

# A, Sec. 4.1.2: the CSLM's perplexity on its validation set (0.1% of the target corpus).
A_CSLM_PERPLEXITY = 45.80

# B, Sec. 4.1: the training corpus.
B_CORPUS = "348M words of WMT'14 English→French"

# B, Table 1: BLEU on news-test-2014 (3003 sentences); "No UNK": sentences without unknown
# words in source and reference, the models not allowed to generate [UNK].
B_TABLE1 = {
    "RNNencdec-30": {"all": 13.93, "no_unk": 24.19},
    "RNNsearch-30": {"all": 21.50, "no_unk": 31.44},
    "RNNencdec-50": {"all": 17.82, "no_unk": 26.71},
    "RNNsearch-50": {"all": 26.75, "no_unk": 34.16},
    "RNNsearch-50*": {"all": 28.45, "no_unk": 36.15},
    "Moses": {"all": 33.30, "no_unk": 35.63},
}

# B, Table 2 (Appendix B): learning statistics; NLL per sentence.
B_TABLE2 = {
    "RNNenc-30": {
        "updates": 8.46e5,
        "epochs": 6.4,
        "hours": 109,
        "gpu": "TITAN BLACK",
        "train_nll": 28.1,
        "dev_nll": 53.0,
    },
    "RNNenc-50": {
        "updates": 6.00e5,
        "epochs": 4.5,
        "hours": 108,
        "gpu": "Quadro K-6000",
        "train_nll": 44.0,
        "dev_nll": 43.6,
    },
    "RNNsearch-30": {
        "updates": 4.71e5,
        "epochs": 3.6,
        "hours": 113,
        "gpu": "TITAN BLACK",
        "train_nll": 26.7,
        "dev_nll": 47.2,
    },
    "RNNsearch-50": {
        "updates": 2.88e5,
        "epochs": 2.2,
        "hours": 111,
        "gpu": "Quadro K-6000",
        "train_nll": 40.7,
        "dev_nll": 38.1,
    },
    "RNNsearch-50*": {
        "updates": 6.67e5,
        "epochs": 5.0,
        "hours": 252,
        "gpu": "Quadro K-6000",
        "train_nll": 36.7,
        "dev_nll": 35.2,
    },
}
