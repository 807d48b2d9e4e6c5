package kafkamigration.authorizer;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizationResult;

/**
 * One case: a cluster's bindings and authorizer settings, and the requests to decide on it.
 *
 * <pre>
 * {"super_users": ["User:admin"], "allow_if_no_acl": false,
 *  "bindings": [[resource_type, resource_name, LITERAL|PREFIXED, principal, host, operation, ALLOW|DENY], ...],
 *  "requests": [[principal, client_address, resource_type, resource_name, operation], ...]}
 * </pre>
 *
 * Names are Kafka's enum constants (TOPIC, DESCRIBE_CONFIGS, ...); a principal is TYPE:NAME; a client address is
 * an IP address literal.
 */
record Case(List<String> superUsers, boolean allowIfNoAcl, List<AclBinding> bindings, List<Request> requests) {

    /** What a client asks: may this principal, connected from this address, do the operation on the resource? */
    record Request(KafkaPrincipal principal, InetAddress address, ResourcePattern resource, AclOperation operation) {}

    static Case fromJson(JsonNode node) throws IOException {
        List<String> superUsers = new ArrayList<>();
        for (JsonNode user : node.path("super_users")) {
            superUsers.add(user.asText());
        }
        List<AclBinding> bindings = new ArrayList<>();
        for (JsonNode b : node.path("bindings")) {
            ResourcePattern pattern = new ResourcePattern(
                    concrete(ResourceType.valueOf(b.get(0).asText())),
                    b.get(1).asText(),
                    concrete(PatternType.valueOf(b.get(2).asText())));
            AccessControlEntry entry = new AccessControlEntry(
                    b.get(3).asText(),
                    b.get(4).asText(),
                    concrete(AclOperation.valueOf(b.get(5).asText())),
                    concrete(AclPermissionType.valueOf(b.get(6).asText())));
            bindings.add(new AclBinding(pattern, entry));
        }
        List<Request> requests = new ArrayList<>();
        for (JsonNode r : node.path("requests")) {
            requests.add(new Request(
                    principal(r.get(0).asText()),
                    InetAddress.getByName(r.get(1).asText()),
                    new ResourcePattern(
                            concrete(ResourceType.valueOf(r.get(2).asText())), r.get(3).asText(), PatternType.LITERAL),
                    concrete(AclOperation.valueOf(r.get(4).asText()))));
        }
        return new Case(superUsers, node.path("allow_if_no_acl").asBoolean(false), bindings, requests);
    }

    /** Kafka's decision on each request, in order: 'A' (ALLOWED) or 'D' (DENIED). */
    String decide() {
        Map<String, Object> config = new HashMap<>();
        config.put(StandardAuthorizer.SUPER_USERS_CONFIG, String.join(";", superUsers));
        config.put(StandardAuthorizer.ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG, Boolean.toString(allowIfNoAcl));
        StringBuilder decisions = new StringBuilder(requests.size());
        try (Metrics metrics = new Metrics(); StandardAuthorizer authorizer = new StandardAuthorizer()) {
            authorizer.withPluginMetrics(new RegistryMetrics(metrics)); // a broker gives it one; authorize() records
            authorizer.configure(config);
            long id = 0;
            // A cluster holds a binding once (its controller refuses a copy), and so does StandardAuthorizer.
            for (AclBinding binding : new LinkedHashSet<>(bindings)) {
                authorizer.addAcl(new Uuid(0L, ++id), StandardAcl.fromAclBinding(binding));
            }
            authorizer.completeInitialLoad();
            for (Request request : requests) {
                Action action = new Action(request.operation(), request.resource(), 1, false, false);
                RequestContext context = new RequestContext(request.principal(), request.address());
                AuthorizationResult result = authorizer.authorize(context, List.of(action)).get(0);
                decisions.append(result == AuthorizationResult.ALLOWED ? 'A' : 'D');
            }
        } catch (IOException e) {
            throw new IllegalStateException("closing the authorizer", e);
        }
        return decisions.toString();
    }

    /** TYPE:NAME, split at the first colon (User:alice). */
    private static KafkaPrincipal principal(String text) {
        int colon = text.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("a principal is TYPE:NAME, not " + text);
        }
        return new KafkaPrincipal(text.substring(0, colon), text.substring(colon + 1));
    }

    /** The filter-only constants (ANY, MATCH) and UNKNOWN name no binding or request. */
    private static <E extends Enum<E>> E concrete(E value) {
        String name = value.name();
        if (name.equals("ANY") || name.equals("MATCH") || name.equals("UNKNOWN")) {
            throw new IllegalArgumentException(value.getDeclaringClass().getSimpleName() + " " + name + " is a filter");
        }
        return value;
    }
}
