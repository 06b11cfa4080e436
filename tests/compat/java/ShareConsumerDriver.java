// A compat driver on Apache Kafka 4.4's share consumer (KIP-932, KafkaShareConsumer, explicit acknowledgement):
//   consume <bootstrap> <topic> <group> <n>
// polls the share group until n records were accepted: a record's first delivery at an odd offset is RELEASEd
// (so it comes back with delivery count 2), every other delivery is ACCEPTed; each poll's acknowledgements are
// committed with commitSync, whose failures end the driver. Prints "record <partition> <offset> <delivery count>
// <value>" per delivery, in order, then closes (leaving the group).
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class ShareConsumerDriver {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[1]);
        p.put("group.id", args[3]);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        int n = Integer.parseInt(args[4]);
        int accepted = 0;
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(p)) {
            consumer.subscribe(List.of(args[2]));
            long deadline = System.currentTimeMillis() + 90_000;
            while (accepted < n) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("only " + accepted + " of " + n + " records accepted in time");
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    short count = r.deliveryCount().orElse((short) -1);
                    System.out.println("record " + r.partition() + " " + r.offset() + " " + count + " " + r.value());
                    if (count == 1 && r.offset() % 2 == 1) {
                        consumer.acknowledge(r, AcknowledgeType.RELEASE);
                    } else {
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                        accepted++;
                    }
                }
                Map<TopicIdPartition, Optional<KafkaException>> results = consumer.commitSync();
                for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : results.entrySet()) {
                    if (e.getValue().isPresent()) {
                        throw new IllegalStateException("commitSync failed for " + e.getKey(), e.getValue().get());
                    }
                }
            }
        }
    }
}
