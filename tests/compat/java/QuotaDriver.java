// A compat driver on Apache Kafka's Java AdminClient for client quotas. Each result is one line:
//   describe <bootstrap> <strict|loose> <component>...   describeClientQuotas; a component is "user=alice" (that
//       entity), "user=" (the default entity) or "user" (any entity of the type); prints one line per entity,
//       "entity user=alice,client-id=<default> values consumer_byte_rate=2048.0", sorted, or "error <class>"
//   alter <bootstrap> <entity> <key=value|key=>...   alterClientQuotas of one entity ("user=alice,client-id=");
//       an empty value removes the key; prints "altered" or "error <class> <message>"
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;

public class QuotaDriver {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(p)) {
            if (args[0].equals("describe")) {
                List<ClientQuotaFilterComponent> components = new ArrayList<>();
                for (int i = 3; i < args.length; i++) {
                    String c = args[i];
                    int eq = c.indexOf('=');
                    if (eq < 0) components.add(ClientQuotaFilterComponent.ofEntityType(c));
                    else if (eq == c.length() - 1) components.add(ClientQuotaFilterComponent.ofDefaultEntity(c.substring(0, eq)));
                    else components.add(ClientQuotaFilterComponent.ofEntity(c.substring(0, eq), c.substring(eq + 1)));
                }
                ClientQuotaFilter filter = args[2].equals("strict")
                    ? ClientQuotaFilter.containsOnly(components) : ClientQuotaFilter.contains(components);
                try {
                    Map<ClientQuotaEntity, Map<String, Double>> found = admin.describeClientQuotas(filter).entities().get();
                    List<String> out = new ArrayList<>();
                    for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : found.entrySet()) {
                        StringBuilder line = new StringBuilder("entity ");
                        Map<String, String> names = new TreeMap<>();
                        for (Map.Entry<String, String> n : e.getKey().entries().entrySet())
                            names.put(n.getKey(), n.getValue() == null ? "<default>" : n.getValue());
                        line.append(String.join(",", names.entrySet().stream().map(x -> x.getKey() + "=" + x.getValue()).toList()));
                        line.append(" values ");
                        line.append(String.join(",", new TreeMap<>(e.getValue()).entrySet().stream().map(x -> x.getKey() + "=" + x.getValue()).toList()));
                        out.add(line.toString());
                    }
                    out.sort(null);
                    for (String line : out) System.out.println(line);
                } catch (ExecutionException e) {
                    System.out.println("error " + e.getCause().getClass().getSimpleName());
                }
            } else if (args[0].equals("alter")) {
                Map<String, String> entity = new HashMap<>();
                for (String part : args[2].split(",")) {
                    int eq = part.indexOf('=');
                    entity.put(part.substring(0, eq), eq == part.length() - 1 ? null : part.substring(eq + 1));
                }
                List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
                for (int i = 3; i < args.length; i++) {
                    int eq = args[i].indexOf('=');
                    String value = args[i].substring(eq + 1);
                    ops.add(new ClientQuotaAlteration.Op(args[i].substring(0, eq), value.isEmpty() ? null : Double.valueOf(value)));
                }
                try {
                    admin.alterClientQuotas(List.of(new ClientQuotaAlteration(new ClientQuotaEntity(entity), ops))).all().get();
                    System.out.println("altered");
                } catch (ExecutionException e) {
                    System.out.println("error " + e.getCause().getClass().getSimpleName() + " " + e.getCause().getMessage());
                }
            }
        }
    }
}
