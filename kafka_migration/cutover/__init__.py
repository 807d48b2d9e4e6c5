"""The switch-over and its reverse: ``point`` (the cutover point, as the ledger keeps a cutover), ``preflight``,
``steps``, ``report``."""
