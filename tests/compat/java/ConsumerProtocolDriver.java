// A compat driver on Apache Kafka's Java consumer with the consumer group protocol (KIP-848):
//   share <bootstrap> <topic> <group> <members> <n> <assignor>
// starts <members> consumers (group.protocol=consumer, group.remote.assignor=<assignor>) in one group, each in
// its own thread; once every member owns a share of the partitions, produces n records "r<i>" to partition
// i % partitions, and the members read until the group has read them (committing after each poll); then member 0
// closes (a ConsumerGroupHeartbeat with epoch -1) and the others keep polling until they own every partition
// of the topic again. Prints "owned <member> <partitions>" per member once all n are read, "record <member>
// <partition> <offset> <value>" per record, "left 0", "reowned <millis> <member> <partitions>" per remaining
// member, and "epoch <member> <member epoch>" from each remaining member's group metadata.
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ConsumerProtocolDriver {
    static final ConcurrentLinkedQueue<String> out = new ConcurrentLinkedQueue<>();

    public static void main(String[] args) throws Exception {
        String bootstrap = args[1], topic = args[2], group = args[3], assignor = args[6];
        int members = Integer.parseInt(args[4]);
        int n = Integer.parseInt(args[5]);
        AtomicInteger read = new AtomicInteger();
        AtomicBoolean allRead = new AtomicBoolean();
        AtomicBoolean done = new AtomicBoolean();
        CountDownLatch reported = new CountDownLatch(members);
        List<Set<Integer>> owned = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        AtomicBoolean[] stop = new AtomicBoolean[members];
        for (int i = 0; i < members; i++) {
            owned.add(Collections.synchronizedSet(new TreeSet<>()));
            stop[i] = new AtomicBoolean();
        }
        int partitions;
        try (KafkaConsumer<String, String> probe = new KafkaConsumer<>(props(bootstrap, group + "-probe", assignor))) {
            partitions = probe.partitionsFor(topic).size();
        }
        for (int i = 0; i < members; i++) {
            final int m = i;
            Thread t = new Thread(() -> {
                boolean reportedOwned = false;
                try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props(bootstrap, group, assignor))) {
                    c.subscribe(List.of(topic));
                    long deadline = System.currentTimeMillis() + 120_000;
                    while (!stop[m].get() && !done.get() && System.currentTimeMillis() < deadline) {
                        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                            out.add("record " + m + " " + r.partition() + " " + r.offset() + " " + r.value());
                            if (read.incrementAndGet() >= n) {
                                allRead.set(true);
                            }
                        }
                        c.commitSync();
                        Set<Integer> now = new TreeSet<>();
                        for (TopicPartition tp : c.assignment()) {
                            now.add(tp.partition());
                        }
                        synchronized (owned.get(m)) {
                            owned.get(m).clear();
                            owned.get(m).addAll(now);
                        }
                        if (allRead.get() && !reportedOwned) {
                            out.add("owned " + m + " " + now.toString().replace(" ", ""));
                            reportedOwned = true;
                            reported.countDown();
                        }
                    }
                    if (!stop[m].get()) {
                        out.add("epoch " + m + " " + c.groupMetadata().generationId());
                    }
                } catch (Exception e) {
                    out.add("error " + m + " " + e);
                } finally {
                    owned.get(m).clear();
                    if (!reportedOwned) {
                        reported.countDown();
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        long formDeadline = System.currentTimeMillis() + 90_000;
        while (System.currentTimeMillis() < formDeadline && !balanced(owned, 0, members, partitions)) {
            Thread.sleep(20);
        }
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = 0; i < n; i++) {
                producer.send(new ProducerRecord<>(topic, i % partitions, null, "r" + i));
            }
        }
        reported.await();
        stop[0].set(true);
        threads.get(0).join();
        out.add("left 0");
        long left = System.currentTimeMillis();
        long deadline = left + 90_000;
        while (System.currentTimeMillis() < deadline) {
            if (balanced(owned, 1, members, partitions)) {
                long took = System.currentTimeMillis() - left;
                for (int i = 1; i < members; i++) {
                    out.add("reowned " + took + " " + i + " " + owned.get(i).toString().replace(" ", ""));
                }
                break;
            }
            Thread.sleep(20);
        }
        done.set(true);
        for (Thread t : threads) {
            t.join();
        }
        out.forEach(System.out::println);
    }

    /** Members from..members-1 each own a share, and the shares cover every partition exactly once. */
    static boolean balanced(List<Set<Integer>> owned, int from, int members, int partitions) {
        Set<Integer> union = new TreeSet<>();
        int total = 0;
        for (int i = from; i < members; i++) {
            synchronized (owned.get(i)) {
                if (owned.get(i).isEmpty()) {
                    return false;
                }
                union.addAll(owned.get(i));
                total += owned.get(i).size();
            }
        }
        return union.size() == partitions && total == partitions;
    }

    static Properties props(String bootstrap, String group, String assignor) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", "consumer");
        p.put("group.remote.assignor", assignor);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return p;
    }
}
