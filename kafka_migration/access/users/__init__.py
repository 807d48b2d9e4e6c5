"""SCRAM users: ``rules`` (which credentials the target lacks and which passwords cover them), ``sync`` (the sync's
part that creates them through ``kafka/access`` and proves each login)."""
