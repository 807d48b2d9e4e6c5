#!/usr/bin/env bash
# kafka-source-format service: format the source broker's KRaft storage with its SCRAM users.
#
# Apache Kafka stores SCRAM credentials in the cluster metadata, and a KRaft cluster's first
# users have to be written when the storage is formatted (kafka-storage.sh format
# --add-scram): nobody could log in to create them later. The apache/kafka image formats
# its storage at start without users, so this one-shot service (same image, same data
# volume, the broker's own KRaft settings) formats it first; the broker's start script then
# finds it formatted and carries on. A formatted volume is left alone (--ignore-formatted).
set -euo pipefail
: "${CLUSTER_ID:?}" "${KAFKA_NODE_ID:?}" "${KAFKA_PROCESS_ROLES:?}" "${KAFKA_CONTROLLER_QUORUM_VOTERS:?}"
: "${KAFKA_CONTROLLER_LISTENER_NAMES:?}" "${KAFKA_LISTENERS:?}" "${KAFKA_ADVERTISED_LISTENERS:?}"
: "${KAFKA_LISTENER_SECURITY_PROTOCOL_MAP:?}" "${KAFKA_INTER_BROKER_LISTENER_NAME:?}"
: "${KAFKA_SASL_ENABLED_MECHANISMS:?}" "${KAFKA_SASL_MECHANISM_INTER_BROKER_PROTOCOL:?}" "${KAFKA_LOG_DIRS:?}"
: "${SOURCE_SASL_USERNAME:?}" "${SOURCE_SASL_PASSWORD:?}" "${SOURCE_BROKER_USERNAME:?}" "${SOURCE_BROKER_PASSWORD:?}"

props=$(mktemp)
trap 'rm -f "$props"' EXIT
cat > "$props" <<PROPS
process.roles=$KAFKA_PROCESS_ROLES
node.id=$KAFKA_NODE_ID
controller.quorum.voters=$KAFKA_CONTROLLER_QUORUM_VOTERS
controller.listener.names=$KAFKA_CONTROLLER_LISTENER_NAMES
listeners=$KAFKA_LISTENERS
advertised.listeners=$KAFKA_ADVERTISED_LISTENERS
listener.security.protocol.map=$KAFKA_LISTENER_SECURITY_PROTOCOL_MAP
inter.broker.listener.name=$KAFKA_INTER_BROKER_LISTENER_NAME
sasl.enabled.mechanisms=$KAFKA_SASL_ENABLED_MECHANISMS
sasl.mechanism.inter.broker.protocol=$KAFKA_SASL_MECHANISM_INTER_BROKER_PROTOCOL
log.dirs=$KAFKA_LOG_DIRS
PROPS

# kafka-storage.sh splits a SCRAM spec at commas, and the values also go into JSON and JAAS
# files: refuse what would be cut or misread, before anything is written.
for value in "$SOURCE_SASL_USERNAME" "$SOURCE_SASL_PASSWORD" "$SOURCE_BROKER_USERNAME" "$SOURCE_BROKER_PASSWORD"; do
  if [[ ! "$value" =~ ^[A-Za-z0-9_.+=/-]+$ ]]; then
    echo "kafka-source-format: SCRAM user names and passwords in .env may only use letters, digits and _ . + = / -" >&2
    exit 2
  fi
done

scram() { printf 'SCRAM-SHA-512=[name=%s,password=%s]' "$1" "$2"; }
"${KAFKA_HOME:-/opt/kafka}/bin/kafka-storage.sh" format --ignore-formatted --cluster-id "$CLUSTER_ID" --config "$props" \
  --add-scram "$(scram "$SOURCE_BROKER_USERNAME" "$SOURCE_BROKER_PASSWORD")" \
  --add-scram "$(scram "$SOURCE_SASL_USERNAME" "$SOURCE_SASL_PASSWORD")"
