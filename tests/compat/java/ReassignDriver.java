// A compat driver on Apache Kafka's Java AdminClient for replica placement. Each command prints the topic's
// partitions afterwards as "partition <p> leader=<id> replicas=<ids> isr=<ids>":
//   reassign <bootstrap> <topic> <partition> <id,id,...>   alterPartitionReassignments, then listPartitionReassignments
//       until the partition is no longer listed (prints "ongoing <p> <replicas>" once per poll that still lists it
//       and "done" when it is gone), then describeTopics until the partition's replicas are the target and its ISR holds them (metadata
//       reaches every broker after the controller finishes, as Kafka's UpdateMetadata does)
//   grow <bootstrap> <topic> <total>                       createPartitions to <total> partitions
//   describe <bootstrap> <topic>
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

public class ReassignDriver {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(p)) {
            String topic = args[2];
            if (args[0].equals("reassign")) {
                TopicPartition tp = new TopicPartition(topic, Integer.parseInt(args[3]));
                List<Integer> target = new ArrayList<>();
                for (String id : args[4].split(",")) {
                    target.add(Integer.parseInt(id));
                }
                admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(target))))
                    .all().get();
                long deadline = System.currentTimeMillis() + 90_000;
                while (true) {
                    Map<TopicPartition, PartitionReassignment> ongoing =
                        admin.listPartitionReassignments().reassignments().get();
                    if (!ongoing.containsKey(tp)) {
                        System.out.println("done");
                        break;
                    }
                    System.out.println("ongoing " + tp.partition() + " " + ongoing.get(tp).replicas());
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("reassignment of " + tp + " still listed after 90 s");
                    }
                    Thread.sleep(200);
                }
                while (!settled(admin, topic, tp.partition(), target)) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("metadata of " + tp + " never showed replicas " + target);
                    }
                    Thread.sleep(200);
                }
            } else if (args[0].equals("grow")) {
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(Integer.parseInt(args[3])))).all().get();
                System.out.println("grown " + args[3]);
            }
            describe(admin, topic);
        }
    }

    static void describe(Admin admin, String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        for (TopicPartitionInfo info : d.partitions()) {
            System.out.println("partition " + info.partition() + " leader=" + info.leader().id()
                + " replicas=" + ids(info.replicas()) + " isr=" + ids(info.isr()));
        }
    }

    static boolean settled(Admin admin, String topic, int partition, List<Integer> target) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        TopicPartitionInfo info = d.partitions().get(partition);
        List<Integer> replicas = new ArrayList<>();
        for (Node n : info.replicas()) {
            replicas.add(n.id());
        }
        java.util.Set<Integer> isr = new java.util.HashSet<>();
        for (Node n : info.isr()) {
            isr.add(n.id());
        }
        return replicas.equals(target) && isr.equals(new java.util.HashSet<>(target));
    }

    static String ids(List<Node> nodes) {
        List<String> out = new ArrayList<>();
        for (Node n : nodes) {
            out.add(Integer.toString(n.id()));
        }
        return String.join(",", out);
    }
}
