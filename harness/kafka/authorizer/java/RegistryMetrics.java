package kafkamigration.authorizer;

import java.util.LinkedHashMap;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.MetricValueProvider;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.Sensor;

/**
 * The metrics a broker gives a plugin (KIP-877), kept in a registry of the case's own: StandardAuthorizer counts
 * its decisions into sensors it asks for here, and authorize() fails without them.
 */
record RegistryMetrics(Metrics metrics) implements PluginMetrics {
    private static final String GROUP = "authorizer-check";

    @Override
    public MetricName metricName(String name, String description, LinkedHashMap<String, String> tags) {
        return metrics.metricName(name, GROUP, description, tags);
    }

    @Override
    public void addMetric(MetricName name, MetricValueProvider<?> provider) {
        metrics.addMetric(name, provider);
    }

    @Override
    public void removeMetric(MetricName name) {
        metrics.removeMetric(name);
    }

    @Override
    public Sensor addSensor(String name) {
        return metrics.sensor(name);
    }

    @Override
    public void removeSensor(String name) {
        metrics.removeSensor(name);
    }
}
