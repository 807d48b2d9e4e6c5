#!/usr/bin/env bash
# kafka-certs service: a demo certificate authority and the source broker's TLS and SASL files.
#
# Runs once per volume (as root, in the apache/kafka image, which ships keytool):
#   /etc/kafka/secrets (volume kafka-source-secrets, the broker only): PKCS12 keystore, the
#       credential files the image's start script reads, the CA as a PEM truststore, the JAAS
#       file with the broker's own SCRAM login, and client.properties for its health check.
#   /ca (volume kafka-ca, read-only in Airflow and on the Spark nodes): ca.pem, what clients
#       verify the broker with (librdkafka's ssl.ca.location).
# Passwords come from the environment, never from arguments.
set -euo pipefail
: "${SOURCE_SSL_PASSWORD:?}" "${SOURCE_BROKER_USERNAME:?}" "${SOURCE_BROKER_PASSWORD:?}"

# The directories and owner are parameters only so that the tests can run this script as it is.
SECRETS=${SECRETS_DIR:-/etc/kafka/secrets}
CA_DIR=${CA_DIR:-/ca}
OWNER=${SECRETS_OWNER:-appuser}
HOST=kafka-source
KEYSTORE="$SECRETS/$HOST.keystore.p12"

if [[ -s "$KEYSTORE" && -s "$CA_DIR/ca.pem" && -s "$SECRETS/kafka_server_jaas.conf" ]]; then
  echo "kafka-certs: certificates already made; nothing to do"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -f "$KEYSTORE"
store=(-storetype PKCS12 -storepass:env SOURCE_SSL_PASSWORD)

keytool -genkeypair -alias ca -dname "CN=kafka-migration demo CA" -keyalg RSA -keysize 2048 \
  -validity 825 -ext bc:c -keystore "$work/ca.p12" "${store[@]}"
keytool -exportcert -rfc -alias ca -keystore "$work/ca.p12" "${store[@]}" > "$work/ca.pem"

keytool -genkeypair -alias "$HOST" -dname "CN=$HOST" -keyalg RSA -keysize 2048 -validity 825 \
  -keystore "$KEYSTORE" "${store[@]}"
keytool -certreq -alias "$HOST" -keystore "$KEYSTORE" "${store[@]}" |
  keytool -gencert -alias ca -keystore "$work/ca.p12" "${store[@]}" -validity 825 -rfc \
    -ext "SAN=dns:$HOST,dns:localhost" -ext "EKU=serverAuth,clientAuth" > "$work/$HOST.pem"
keytool -importcert -noprompt -alias ca -file "$work/ca.pem" -keystore "$KEYSTORE" "${store[@]}"
keytool -importcert -alias "$HOST" -file "$work/$HOST.pem" -keystore "$KEYSTORE" "${store[@]}"

printf '%s' "$SOURCE_SSL_PASSWORD" > "$SECRETS/keystore_creds"
printf '%s' "$SOURCE_SSL_PASSWORD" > "$SECRETS/key_creds"
cp "$work/ca.pem" "$SECRETS/ca.pem"

cat > "$SECRETS/kafka_server_jaas.conf" <<JAAS
KafkaServer {
  org.apache.kafka.common.security.scram.ScramLoginModule required
  username="$SOURCE_BROKER_USERNAME"
  password="$SOURCE_BROKER_PASSWORD";
};
JAAS

cat > "$SECRETS/client.properties" <<PROPS
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$SOURCE_BROKER_USERNAME" password="$SOURCE_BROKER_PASSWORD";
ssl.truststore.type=PEM
ssl.truststore.location=$SECRETS/ca.pem
PROPS

chown -R "$OWNER:" "$SECRETS"
chmod 0600 "$SECRETS"/*
chmod 0644 "$SECRETS/ca.pem"

cp "$work/ca.pem" "$CA_DIR/ca.pem.tmp"
chmod 0644 "$CA_DIR/ca.pem.tmp"
mv "$CA_DIR/ca.pem.tmp" "$CA_DIR/ca.pem"
echo "kafka-certs: CA and keystore for $HOST made"
