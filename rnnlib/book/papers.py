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

# A, Sec. 4.1.2: the CSLM's training data beside the target side of the bitext (millions of
# words of news).
A_CSLM_NEWS_MWORDS = 712

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

#: B Table 3 (Appendix C), its first example: a test sentence of 30 words or more, as printed
B_TABLE3_EXAMPLE = {
    "source": "An admitting privilege is the right of a doctor to admit a patient to a hospital or "
    "a medical centre to carry out a diagnosis or a procedure, based on his status as a health "
    "care worker at a hospital.",
    "reference": "Le privilège d'admission est le droit d'un médecin, en vertu de son statut de "
    "membre soignant d'un hôpital, d'admettre un patient dans un hôpital ou un centre médical "
    "afin d'y délivrer un diagnostic ou un traitement.",
    "RNNenc-50": "Un privilège d'admission est le droit d'un médecin de reconnaître un patient à "
    "l'hôpital ou un centre médical d'un diagnostic ou de prendre un diagnostic en fonction de "
    "son état de santé.",
    "RNNsearch-50": "Un privilège d'admission est le droit d'un médecin d'admettre un patient à un "
    "hôpital ou un centre médical pour effectuer un diagnostic ou une procédure, selon son "
    "statut de travailleur des soins de santé à l'hôpital.",
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

# A, Table 2: for source phrases of 4 or more words, drawn at random among frequent (a) and rare
# (b) ones, the top target phrases by the translation model's p(f|e) and by the RNN
# Encoder-Decoder. Cells the paper prints garbled (its caption warns of partial characters and a
# Cyrillic ghe) are given as its text reads, with the "?" it prints.
A_TABLE2 = {
    "frequent": [
        ("at the end of the",
         ["a la fin de la", "ŕ la fin des années", "être supprimés à la fin de la"],
         ["à la fin du", "à la fin des", "à la fin de la"]),
        ("for the first time",
         ["ґ ©? pour la premiґère fois", "été donnés pour la première fois",
          "été commémorée pour la première fois"],
         ["pour la première fois", "pour la première fois ,", "pour la première fois que"]),
        ("in the United States and",
         ["? aux ?tats-Unis et", "été ouvertes aux États-Unis et",
          "été constatées aux États-Unis et"],
         ["aux Etats-Unis et", "des Etats-Unis et", "des États-Unis et"]),
        (", as well as",
         ["?s , qu'", "?s , ainsi que", "?re aussi bien que"],
         [", ainsi qu'", ", ainsi que", ", ainsi que les"]),
        ("one of the most",
         ["?t ?l' un des plus", "?l' un des plus", "être retenue comme un de ses plus"],
         ["l' un des", "le", "un des"]),
    ],
    "rare": [
        (", Minister of Communications and Transport",
         ["Secrétaire aux communications et aux transports :",
          "Secrétaire aux communications et aux transports"],
         ["Secrétaire aux communications et aux transports",
          "Secrétaire aux communications et aux transports :"]),
        ("did not comply with the",
         ["vestimentaire , ne correspondaient pas à des",
          "susmentionnée n' était pas conforme aux", "présentées n' étaient pas conformes à la"],
         ["n' ont pas respecté les", "n' était pas conforme aux", "n' ont pas respecté la"]),
        ("parts of the world .",
         ["c… gions du monde .", "régions du monde considérées .", "région du monde considérée ."],
         ["parties du monde .", "les parties du monde .", "des parties du monde ."]),
        ("the past few days .",
         ["le petit texte .", "cours des tout derniers jours .", "les tout derniers jours ."],
         ["ces derniers jours .", "les derniers jours .", "cours des derniers jours ."]),
        ("on Friday and Saturday",
         ["vendredi et samedi à la", "vendredi et samedi à", "se déroulera vendredi et samedi ,"],
         ["le vendredi et le samedi", "le vendredi et samedi", "vendredi et samedi"]),
    ],
}  # fmt: skip

# A, Table 3: the top target phrases among 50 samples from the RNN Encoder-Decoder for each source
# of Table 2, in the printed order, with how often each was drawn (None: no count printed);
# accents the text of the paper lost ("n' tait", "respect l'") restored.
A_TABLE3 = {
    "frequent": [
        ("at the end of the", [("à la fin de la", 11)]),
        ("for the first time", [("pour la première fois", 24), ("pour la première fois que", 2)]),
        ("in the United States and", [("aux États-Unis et", 6), ("dans les États-Unis et", 4)]),
        (", as well as", [(", ainsi que", None), (",", None), ("ainsi que", None),
                          (", ainsi qu'", None), ("et UNK", None)]),
        ("one of the most",
         [("l' un des plus", 9), ("l' un des", 5), ("l' une des plus", 2)]),
    ],
    "rare": [
        (", Minister of Communications and Transport",
         [(", ministre des communications et le transport", 13)]),
        ("did not comply with the",
         [("n' était pas conforme aux", None), ("n' a pas respecté l'", 2),
          ("n' a pas respecté la", 3)]),
        ("parts of the world .", [("arts du monde .", 11), ("des arts du monde .", 7)]),
        ("the past few days .",
         [("quelques jours .", 5), ("les derniers jours .", 5), ("ces derniers jours .", 2)]),
        ("on Friday and Saturday",
         [("vendredi et samedi", 5), ("le vendredi et samedi", 7),
          ("le vendredi et le samedi", 4)]),
    ],
}  # fmt: skip

# A, Sec. 4.3 / Table 3: the samples drawn per source phrase.
A_TABLE3_SAMPLES = 50

# A, Sec. 4.4 and Figs. 5 and 7: the phrases mapped (randomly selected, of four or more words).
A_FIG5_PHRASES = 5000
A_FIG7_PHRASES = 1000
A_MAP_MIN_WORDS = 4
