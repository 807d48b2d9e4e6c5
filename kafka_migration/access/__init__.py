"""Moving a cluster's access control with its data: ACL bindings (``acls/``), SCRAM users (``users/``) and client
quotas (``quotas/``), each with its pure ``rules`` and its part of the sync (``sync``), planned, applied and proven
by the authorizer's decisions, the users' logins and live probes (``probes/``) and both clusters' quotas; the
whole sync in ``sync.py``, its inputs in ``inputs.py``, the permissions it needs checked first in
``permissions.py``."""
