"""Apache Kafka's own authorizer, StandardAuthorizer (kafka-metadata), as the reference for the product's model of
it (kafka_migration/access/acls/rules.py): the same bindings and requests, Kafka's decisions.

- java/     the Java program: reads cases on stdin, one JSON line each, prints Kafka's decision per request
- build     compile it with the JDK's javac against the jar set, into a cache folder keyed by the sources' hash
- protocol  a case (bindings, super.users, allow.everyone.if.no.acl.found, requests) and its answer, as lines
- process   one long-lived JVM serving every case of a run (a JVM start per case would cost a second each)

    with KafkaAuthorizer(compiled(cache), log) as kafka:
        results = kafka.decide(Case(bindings, requests, super_users=("User:admin",)))

Only Kafka's public API is used (configure, addAcl with StandardAcl.fromAclBinding, completeInitialLoad,
authorize); the request context is the program's own. No Kafka code is copied and nothing compiled is kept in git.
"""

from harness.kafka.authorizer.build import CompileFailed, JavacMissing, compiled
from harness.kafka.authorizer.process import KafkaAuthorizer
from harness.kafka.authorizer.protocol import AuthorizerError, Case, Result

__all__ = [
    "AuthorizerError",
    "Case",
    "CompileFailed",
    "JavacMissing",
    "KafkaAuthorizer",
    "Result",
    "compiled",
]
