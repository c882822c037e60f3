"""The book's tooling: the chapter helper, parameters and profiles, the pipeline that executes
chapters and builds the HTML, the artifact cache, the faithfulness ledger, the papers' published
numbers, plotting, the chapters' shared helpers, and the ``rnnlib`` command line."""
