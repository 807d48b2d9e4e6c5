"""Moving a cluster's access control with its data: ACL bindings (and, next, SCRAM users and client quotas),
planned, applied and proven by the authorizer's decisions on both clusters."""
