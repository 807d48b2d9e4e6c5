"""The switch-over and its reverse: ``record`` (the cutover record), ``preflight``, ``steps``, ``report``."""
