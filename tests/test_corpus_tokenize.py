"""Moses tokenization and detokenization, and the vocabulary shortlists."""

from collections import Counter

import numpy as np
import pytest
import sacrebleu
from sacremoses import MosesTokenizer

from rnnlib.corpus.tokenize import Tokenizer
from rnnlib.corpus.vocab import Vocab
from rnnlib.specials import BOS, EOS, PAD, UNK

EN = [
    "And God said, Let there be light: and there was light.",
    "He said to the woman, \"Yes, has God said, 'You shall not eat of any tree of the garden?'\"",
    "It's Yahweh's word -- the 3,000 men (e.g. of Judah) didn't go.",
    (
        "Paul, a servant of God, and an apostle of Jesus Christ, according to the faith of "
        "God's chosen ones."
    ),
]
FR = [
    "L'Éternel dit à Moïse: Va vers Pharaon, et tu lui diras: Ainsi parle l'Éternel!",
    "Qu'il y ait des luminaires dans l'étendue des cieux; n'est-ce pas « bien » ?",
    "Aujourd'hui, 3 000 hommes s'en allèrent au-dessus des eaux...",
]


def test_moses_tokens_as_the_papers_used():
    tok = Tokenizer("fr")
    assert tok.tokenize("L'homme dit: oui.") == ["L'", "homme", "dit", ":", "oui", "."]
    assert Tokenizer("en").tokenize("It's God's.") == ["It", "'s", "God", "'s", "."]
    assert Tokenizer("en", lowercase=True).tokenize("The LORD said") == ["the", "lord", "said"]
    assert Tokenizer("en", kind="whitespace").tokenize("a  b\tc") == ["a", "b", "c"]
    with pytest.raises(ValueError, match="tokenizer='spacy'"):
        Tokenizer("en", kind="spacy")


@pytest.mark.parametrize("lang,texts", [("en", EN), ("fr", FR)])
def test_fast_tokenizer_equals_sacremoses(lang, texts):
    stock = MosesTokenizer(lang)
    ours = Tokenizer(lang)
    for t in texts:
        assert ours.tokenize(t) == stock.tokenize(t, escape=False)


@pytest.mark.parametrize("lang,texts", [("en", EN), ("fr", FR)])
def test_round_trip_tokens_and_bleu(lang, texts):
    tok = Tokenizer(lang)
    detok = [tok.detokenize(tok.tokenize(t)) for t in texts]
    assert [tok.tokenize(d) for d in detok] == [tok.tokenize(t) for t in texts]
    assert sacrebleu.corpus_bleu(detok, [texts]).score > 99
    assert detok == DETOKENIZED[lang]


#: what detokenization gives back: English exactly the text; French with Moses' French
#: typography, a space before ":", ";", "!" and "?" (sacreBLEU retokenizes, so BLEU is unchanged)
DETOKENIZED = {
    "en": EN,
    "fr": [
        "L'Éternel dit à Moïse : Va vers Pharaon, et tu lui diras : Ainsi parle l'Éternel !",
        "Qu'il y ait des luminaires dans l'étendue des cieux ; n'est-ce pas « bien » ?",
        "Aujourd'hui, 3 000 hommes s'en allèrent au-dessus des eaux...",
    ],
}


def test_vocab_shortlist_ids_and_unk():
    counts = Counter("the the the of of and lord lord lord lord zebra".split())
    v = Vocab.build(counts, 3)
    assert v.itos == ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "lord", "the", "of"]
    assert (PAD, UNK, BOS, EOS) == (0, 1, 2, 3)
    ids = v.encode("the zebra and lord".split())
    assert ids.dtype == np.int32 and list(ids) == [5, UNK, UNK, 4]
    assert v.decode([BOS, 5, 4, EOS, 6, PAD]) == ["the", "lord"]
    assert v.decode([5, UNK], strip=False) == ["the", "[UNK]"]
    assert len(Vocab.build(counts, 100)) == 5 + 4  # all types fit: no UNK needed
    tie = Vocab.build(Counter({"b": 1, "a": 1, "c": 2}), 2)
    assert tie.itos[4:] == ["c", "a"]  # ties broken alphabetically
    with pytest.raises(ValueError):
        Vocab.build(counts, 0)


def test_vocab_save_load(tmp_path):
    v = Vocab.build(Counter({"é": 3, "l'": 2, "[": 1}), 10)
    v.save(tmp_path / "v.txt")
    w = Vocab.load(tmp_path / "v.txt")
    assert w.itos == v.itos and w.counts == [3, 2, 1]
