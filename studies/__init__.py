"""The studies behind the library's defaults and the reproduction's choices (not installed).

Each module is one study: it fits models, writes its rows to a CSV (committed under
``results/studies/``) and prints a summary. They live beside the package, never inside it: the
library cites none of them, and the documentation's study pages read their CSVs. Run them from
the repository root::

    python -m studies                        # the studies, one line each
    python -m studies <study> [args...]      # e.g. python -m studies dev_suite --summary-only
    python -m studies.<study> [args...]      # the same

A study imports another as ``from studies import dev_suite``.
"""
