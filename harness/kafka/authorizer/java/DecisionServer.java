package kafkamigration.authorizer;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * Apache Kafka's StandardAuthorizer answering cases read from stdin, one JSON object a line, for as long as
 * stdin stays open: one JVM serves every case of a test run.
 *
 * <p>It first prints {"ready": KAFKA_VERSION}. Then, for each case line (see {@link Case}), one line:
 * {"decisions": "ADDA..."} (A: ALLOWED, D: DENIED, one letter per request, in order) or {"error": "..."} for a
 * case it could not read or decide. Only those lines reach stdout: whatever Kafka's classes print goes to stderr.
 */
public final class DecisionServer {
    private DecisionServer() {}

    public static void main(String[] args) throws IOException {
        PrintStream replies = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err); // before any Kafka class logs: log4j's console appender then writes to stderr
        ObjectMapper json = new ObjectMapper();
        BufferedReader cases = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        reply(replies, json.writeValueAsString(Map.of("ready", AppInfoParser.getVersion())));
        String line;
        while ((line = cases.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            String answer;
            try {
                answer = json.writeValueAsString(Map.of("decisions", Case.fromJson(json.readTree(line)).decide()));
            } catch (IOException | RuntimeException e) {
                answer = json.writeValueAsString(Map.of("error", String.valueOf(e)));
            }
            reply(replies, answer);
        }
    }

    private static void reply(PrintStream replies, String line) {
        replies.println(line);
        replies.flush();
    }
}
