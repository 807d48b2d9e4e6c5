"""What the tests, the demo and the bench put on the clusters and read back, through plain Kafka clients.

- seed           the sample data sets (``python -m harness.data.seed``: the compose stack's kafka-seed service)
- read           independent reads of whole partitions, for tests that check the target themselves
- topics         topic administration as an operator does it: configs, deleted records, the log's ends
- records        ``python -m harness.data.records delete``: DeleteRecords from the command line, to practise a fault
- compaction     compacted topics whose log cleaner has run
- transactions   transactional producers interleaved on the same partitions, and the layout they leave
- group_clients  consumer-group clients: commit positions, keep a group active, read where it resumes
- app            ``python -m harness.data.app``: the tutorial's producer and consumer
- access         the SCRAM users, ACL bindings and client quotas of ``make clusters KIND=acl``'s source
"""
