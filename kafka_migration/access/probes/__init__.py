"""The users' live probes: ``rules`` (which probes a user's bindings call for), ``live`` (both clusters asked
through ``kafka/sessions``). Their values are ``model/probes``."""
