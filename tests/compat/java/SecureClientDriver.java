// A compat driver on Apache Kafka's Java clients over a secured listener. The client settings (security.protocol,
// sasl.*, ssl.*) come from a .properties file as Kafka's tools take them (--command-config); bootstrap.servers is
// set from the command line. Every result is one line of space-separated fields:
//   list-topics <client.properties> <bootstrap>
//       Admin.listTopics: "topics <n> <elapsed ms>", or on failure "error <exception class> <elapsed ms> <message>"
//       and exit code 3 (the exception is the cause of the future's ExecutionException)
//   round-trip <client.properties> <bootstrap> <topic> <n>
//       produces n records (key-i, value-i) to partition 0 with acks=all, then reads partition 0 from the start:
//       "produced <n>", "record <offset> <key> <value>" per record read, "consumed <count>"
//   consume <client.properties> <bootstrap> <topic> <n>
//       the reading half of round-trip alone (up to n records of partition 0, 60 s at most)
//   reauth <client.properties> <bootstrap> <topic> <seconds>
//       a producer sends one record every 200 ms and a consumer in a group reads them, for <seconds>; then
//       "produced <n>", "consumed <n>", and "metric <producer|consumer> <name> <value>" for the Java clients'
//       successful/failed (re)authentication counters (the selector's *-total metrics)
// Written against Kafka 4.4's clients, using only API that Kafka 3.9's clients have too (it runs on both).
import java.io.FileInputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class SecureClientDriver {
    static final Set<String> AUTH_METRICS = Set.of(
        "successful-authentication-total", "failed-authentication-total",
        "successful-reauthentication-total", "failed-reauthentication-total");

    public static void main(String[] args) throws Exception {
        Properties config = new Properties();
        try (FileInputStream in = new FileInputStream(args[1])) {
            config.load(in);
        }
        config.put("bootstrap.servers", args[2]);
        switch (args[0]) {
            case "list-topics":
                System.exit(listTopics(config));
                break;
            case "round-trip":
                produce(config, args[3], Integer.parseInt(args[4]));
                consume(config, args[3], Integer.parseInt(args[4]));
                break;
            case "consume":
                consume(config, args[3], Integer.parseInt(args[4]));
                break;
            case "reauth":
                reauth(config, args[3], Long.parseLong(args[4]));
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    static int listTopics(Properties config) throws Exception {
        config.put("default.api.timeout.ms", "60000");
        long started = System.nanoTime();
        try (Admin admin = Admin.create(config)) {
            try {
                Set<String> names = admin.listTopics().names().get(90, TimeUnit.SECONDS);
                System.out.println("topics " + names.size() + " " + elapsedMs(started));
                return 0;
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                System.out.println("error " + cause.getClass().getName() + " " + elapsedMs(started) + " "
                    + cause.getMessage());
                return 3;
            }
        }
    }

    static long elapsedMs(long started) {
        return (System.nanoTime() - started) / 1_000_000;
    }

    static Properties producerConfig(Properties config) {
        Properties p = new Properties();
        p.putAll(config);
        p.put("acks", "all");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        return p;
    }

    static Properties consumerConfig(Properties config, String group) {
        Properties p = new Properties();
        p.putAll(config);
        if (group != null) {
            p.put("group.id", group);
        }
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return p;
    }

    static void produce(Properties config, String topic, int n) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig(config))) {
            for (int i = 0; i < n; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "key-" + i, "value-" + i)).get(60, TimeUnit.SECONDS);
            }
        }
        System.out.println("produced " + n);
    }

    static void consume(Properties config, String topic, int n) {
        TopicPartition tp = new TopicPartition(topic, 0);
        int count = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerConfig(config, null))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 60_000;
            while (count < n && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    System.out.println("record " + r.offset() + " " + r.key() + " " + r.value());
                    count++;
                }
            }
        }
        System.out.println("consumed " + count);
    }

    static void reauth(Properties config, String topic, long seconds) throws Exception {
        String group = "reauth-" + UUID.randomUUID().toString().substring(0, 8);
        int produced = 0;
        int consumed = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig(config));
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerConfig(config, group))) {
            consumer.subscribe(List.of(topic));
            long end = System.currentTimeMillis() + seconds * 1000;
            while (System.currentTimeMillis() < end) {
                producer.send(new ProducerRecord<>(topic, "k" + produced, "v" + produced)).get(30, TimeUnit.SECONDS);
                produced++;
                consumed += consumer.poll(Duration.ofMillis(200)).count();
            }
            long drain = System.currentTimeMillis() + 30_000;
            while (consumed < produced && System.currentTimeMillis() < drain) {
                consumed += consumer.poll(Duration.ofMillis(200)).count();
            }
            System.out.println("produced " + produced);
            System.out.println("consumed " + consumed);
            printAuthMetrics("producer", producer.metrics());
            printAuthMetrics("consumer", consumer.metrics());
        }
    }

    static void printAuthMetrics(String client, Map<MetricName, ? extends Metric> metrics) {
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName name = e.getKey();
            if (AUTH_METRICS.contains(name.name()) && name.group().equals(client + "-metrics")) {
                System.out.println("metric " + client + " " + name.name() + " " + e.getValue().metricValue());
            }
        }
    }
}
