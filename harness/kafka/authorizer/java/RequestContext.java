package kafkamigration.authorizer;

import java.net.InetAddress;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

/**
 * A request as a broker hands it to its authorizer: who (the authenticated principal) from where (the client's
 * address). The rest describes a plausible request; StandardAuthorizer decides on the principal and address only.
 */
record RequestContext(KafkaPrincipal principal, InetAddress clientAddress) implements AuthorizableRequestContext {
    @Override
    public String listenerName() {
        return "EXTERNAL";
    }

    @Override
    public SecurityProtocol securityProtocol() {
        return SecurityProtocol.SASL_SSL;
    }

    @Override
    public int requestType() {
        return 3; // Metadata
    }

    @Override
    public int requestVersion() {
        return 12;
    }

    @Override
    public String clientId() {
        return "kafka-migration-authorizer-check";
    }

    @Override
    public int correlationId() {
        return 0;
    }
}
