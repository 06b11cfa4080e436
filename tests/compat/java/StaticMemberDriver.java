// A compat driver on Apache Kafka's Java consumer with static membership (KIP-345):
//   consume <bootstrap> <topic> <group> <group.instance.id> <n>
// joins the classic group as that static member, reads until n records, commits, prints
// "member <generation> <member id> <assigned partitions>" and "record <partition> <offset> <value>" lines, and closes
// (a static member's close sends no LeaveGroup, so the group keeps its slot for the session timeout).
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class StaticMemberDriver {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[1]);
        p.put("group.id", args[3]);
        p.put("group.instance.id", args[4]);
        p.put("group.protocol", "classic");
        p.put("session.timeout.ms", "60000");
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        int n = Integer.parseInt(args[5]);
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(args[2]));
            long deadline = System.currentTimeMillis() + 90_000;
            while (out.size() < n && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add("record " + r.partition() + " " + r.offset() + " " + r.value());
                }
            }
            consumer.commitSync();
            List<Integer> owned = new ArrayList<>();
            for (TopicPartition tp : consumer.assignment()) {
                owned.add(tp.partition());
            }
            Collections.sort(owned);
            System.out.println("member " + consumer.groupMetadata().generationId() + " "
                + consumer.groupMetadata().memberId() + " " + owned.toString().replace(" ", ""));
        }
        out.forEach(System.out::println);
    }
}
