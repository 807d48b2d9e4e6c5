"""What a run reads like afterwards: the sign-off report (``signoff``) and the per-topic summary (``summary``)."""
