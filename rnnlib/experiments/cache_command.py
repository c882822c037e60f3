"""``rnnlib cache``: the artifact cache's commands (:mod:`rnnlib.cache_commands`), with
``cache ls`` naming each trained model as the book names it.

``ls`` leads every row with a name: a training run of the rnnsearch chapter as ``RNNsearch-50``,
``RNNencdec-30``, ``RNNsearch-50*`` (``(the build's)`` when the last build, ``--out``, cites it:
the run ``rnnlib translate --model`` reads), the other networks by what they are (the phrase
scorer, the CSLM, the copy task's models), and ``-`` for what is not a model.
"""

from __future__ import annotations

from .. import cache_commands
from ..cache import default_cache_root
from .trained_models import entry_namer


add_arguments = cache_commands.add_arguments


def main(args) -> int:
    if args.action != "ls":
        return cache_commands.main(args)
    root = (args.cache or default_cache_root()).resolve()
    if not root.is_dir():
        return cache_commands.main(args)  # says there is no cache, exit 2
    return cache_commands.ls_main(root, args.kind, entry_namer(root, args.out))
