// A compat driver on Apache Kafka's Java producer with its default enable.metrics.push=true (KIP-714): it produces
// one record every 50 ms for the given seconds, then closes (a terminating push), printing one line per phase:
//   produce <bootstrap> <topic> <client.id> <seconds>
//     -> "instance <client instance id>" (KafkaProducer.clientInstanceId: the id the broker assigned)
//     -> "sent <records>"
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class TelemetryDriver {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, args[3]);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        long end = System.currentTimeMillis() + Long.parseLong(args[4]) * 1000;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            System.out.println("instance " + producer.clientInstanceId(Duration.ofSeconds(30)));
            int sent = 0;
            while (System.currentTimeMillis() < end) {
                producer.send(new ProducerRecord<>(args[2], "k" + sent, "v" + sent)).get();
                sent++;
                Thread.sleep(50);
            }
            System.out.println("sent " + sent);
        }
    }
}
