// A compat driver on Apache Kafka's Java AdminClient. Every result is printed as one line of space-separated fields
// (sorted where the API returns a map), so the Python test can compare them with what it wrote:
//   create <bootstrap> <topic> <partitions> <config=value>   createTopics, then describeTopics
//   inspect <bootstrap> <topic> <partitions> <timestamp> <group> <delete-before>
//       describeTopics, describeConfigs, listOffsets (earliest, latest, forTimestamp, maxTimestamp),
//       deleteRecords on partition 0, listOffsets earliest again, listConsumerGroups, describeConsumerGroups,
//       listConsumerGroupOffsets of the group
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.DeletedRecords;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;

public class AdminDriver {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(p)) {
            String topic = args[2];
            int partitions = Integer.parseInt(args[3]);
            if (args[0].equals("create")) {
                String[] kv = args[4].split("=", 2);
                NewTopic t = new NewTopic(topic, partitions, (short) 1).configs(Map.of(kv[0], kv[1]));
                admin.createTopics(List.of(t)).all().get();
                System.out.println("created " + topic);
                describe(admin, topic);
            } else {
                inspect(admin, topic, partitions, Long.parseLong(args[4]), args[5], Long.parseLong(args[6]));
            }
        }
    }

    static void describe(Admin admin, String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        System.out.println("topic " + d.name() + " " + d.topicId() + " internal=" + d.isInternal());
        for (TopicPartitionInfo info : d.partitions()) {
            System.out.println("partition " + info.partition() + " leader=" + info.leader().id()
                + " replicas=" + ids(info.replicas()) + " isr=" + ids(info.isr()));
        }
    }

    static String ids(List<org.apache.kafka.common.Node> nodes) {
        List<String> out = new ArrayList<>();
        for (org.apache.kafka.common.Node n : nodes) {
            out.add(Integer.toString(n.id()));
        }
        return String.join(",", out);
    }

    static void offsets(Admin admin, String label, String topic, int partitions, OffsetSpec spec) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int i = 0; i < partitions; i++) {
            request.put(new TopicPartition(topic, i), spec);
        }
        Map<TopicPartition, ListOffsetsResultInfo> result = admin.listOffsets(request).all().get();
        for (int i = 0; i < partitions; i++) {
            ListOffsetsResultInfo info = result.get(new TopicPartition(topic, i));
            System.out.println("offsets " + label + " " + i + " " + info.offset() + " " + info.timestamp());
        }
    }

    static void inspect(Admin admin, String topic, int partitions, long timestamp, String group, long deleteBefore)
            throws Exception {
        describe(admin, topic);
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
        for (String name : List.of("retention.ms", "cleanup.policy", "max.message.bytes")) {
            ConfigEntry e = config.get(name);
            System.out.println("config " + name + " " + e.value() + " " + e.source() + " default=" + e.isDefault());
        }
        offsets(admin, "earliest", topic, partitions, OffsetSpec.earliest());
        offsets(admin, "latest", topic, partitions, OffsetSpec.latest());
        offsets(admin, "time", topic, partitions, OffsetSpec.forTimestamp(timestamp));
        offsets(admin, "max", topic, partitions, OffsetSpec.maxTimestamp());

        TopicPartition p0 = new TopicPartition(topic, 0);
        DeletedRecords deleted = admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(deleteBefore)))
            .lowWatermarks().get(p0).get();
        System.out.println("deleted 0 low_watermark=" + deleted.lowWatermark());
        offsets(admin, "earliest-after-delete", topic, partitions, OffsetSpec.earliest());

        List<String> listed = new ArrayList<>();
        for (ConsumerGroupListing g : admin.listConsumerGroups().all().get()) {
            if (g.groupId().equals(group)) {
                listed.add("listed " + g.groupId() + " simple=" + g.isSimpleConsumerGroup()
                    + " state=" + g.groupState().map(Object::toString).orElse("?"));
            }
        }
        Collections.sort(listed);
        listed.forEach(System.out::println);

        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        System.out.println("group " + d.groupId() + " state=" + d.groupState() + " type=" + d.type()
            + " assignor=" + d.partitionAssignor() + " coordinator=" + d.coordinator().id()
            + " members=" + d.members().size());
        List<String> members = new ArrayList<>();
        for (MemberDescription m : d.members()) {
            List<Integer> owned = new ArrayList<>();
            for (TopicPartition tp : m.assignment().topicPartitions()) {
                owned.add(tp.partition());
            }
            Collections.sort(owned);
            members.add("member " + m.clientId() + " " + owned);
        }
        Collections.sort(members);
        members.forEach(System.out::println);

        Map<TopicPartition, OffsetAndMetadata> committed =
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        Map<Integer, String> sorted = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : committed.entrySet()) {
            sorted.put(e.getKey().partition(), e.getValue().offset() + " " + e.getValue().metadata());
        }
        sorted.forEach((k, v) -> System.out.println("committed " + k + " " + v));
    }
}
