"""Site build: the MkDocs hook that renders the ledger into pages, and the two-language
build and serve command (python -m thousand.site build|serve)."""
