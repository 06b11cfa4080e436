// A compat driver on Apache Kafka's Java clients: `produce <bootstrap> <topic> <txn-id> <n>` writes n records in
// one committed transaction and n in an aborted one (acks=all, idempotent), printing "committed <partition> <offset>"
// per acknowledged committed record; `consume <bootstrap> <topic> <group> <n> <strategy>` reads read_committed in a
// classic group with that assignor until n records, commits, and prints "record <partition> <offset> <key> <value>".
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ExactlyOnceDriver {
    public static void main(String[] args) throws Exception {
        if (args[0].equals("produce")) {
            produce(args[1], args[2], args[3], Integer.parseInt(args[4]));
        } else {
            consume(args[1], args[2], args[3], Integer.parseInt(args[4]), args[5]);
        }
    }

    static void produce(String bootstrap, String topic, String txnId, int n) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("transactional.id", txnId);
        p.put("linger.ms", "5");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, "key-" + i, "committed-" + i)));
            }
            producer.commitTransaction();
            for (Future<RecordMetadata> f : sent) {
                RecordMetadata m = f.get();
                System.out.println("committed " + m.partition() + " " + m.offset());
            }
            producer.beginTransaction();
            for (int i = 0; i < n; i++) {
                producer.send(new ProducerRecord<>(topic, "key-" + i, "aborted-" + i));
            }
            producer.flush();
            producer.abortTransaction();
        }
    }

    static void consume(String bootstrap, String topic, String group, int n, String strategy) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", "classic");
        p.put("partition.assignment.strategy", strategy);
        p.put("isolation.level", "read_committed");
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        int seen = 0;
        long deadline = System.currentTimeMillis() + 60_000;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            while (seen < n && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    System.out.println("record " + r.partition() + " " + r.offset() + " " + r.key() + " " + r.value());
                    seen++;
                }
            }
            // a duplicate or an aborted record would show up here
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                System.out.println("record " + r.partition() + " " + r.offset() + " " + r.key() + " " + r.value());
            }
            consumer.commitSync();
        }
    }
}
