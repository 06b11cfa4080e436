import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.share.ShareCoordinatorRecordSerde;
import org.apache.kafka.coordinator.share.generated.ShareSnapshotKey;
import org.apache.kafka.coordinator.share.generated.ShareSnapshotValue;
import org.apache.kafka.coordinator.share.generated.ShareUpdateKey;
import org.apache.kafka.coordinator.share.generated.ShareUpdateValue;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.share.SharePartitionKey;

/**
 * Prints Kafka 4.4's bytes of __share_group_state records (ShareCoordinatorRecordSerde), one line per record:
 * "<name> <key hex> <value hex or null>", and per share-partition key "partition <key> <partition of 50>".
 * Usage: ShareStateRecordsDriver <group> <topic id, Kafka's base64> <partition>
 */
public final class ShareStateRecordsDriver {
    private static String hex(byte[] b) {
        if (b == null) return "null";
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    private static void print(String name, CoordinatorRecord r) {
        ShareCoordinatorRecordSerde serde = new ShareCoordinatorRecordSerde();
        System.out.println(name + " " + hex(serde.serializeKey(r)) + " " + hex(serde.serializeValue(r)));
    }

    public static void main(String[] args) {
        String group = args[0];
        Uuid topicId = Uuid.fromString(args[1]);
        int partition = Integer.parseInt(args[2]);
        ShareSnapshotKey sk = new ShareSnapshotKey().setGroupId(group).setTopicId(topicId).setPartition(partition);
        ShareUpdateKey uk = new ShareUpdateKey().setGroupId(group).setTopicId(topicId).setPartition(partition);

        print("snapshot", CoordinatorRecord.record(sk, new ApiMessageAndVersion(new ShareSnapshotValue()
            .setSnapshotEpoch(3).setStateEpoch(2).setLeaderEpoch(7).setStartOffset(100L)
            .setCreateTimestamp(1700000000000L).setWriteTimestamp(1700000000123L)
            .setStateBatches(List.of(
                new ShareSnapshotValue.StateBatch().setFirstOffset(100L).setLastOffset(104L)
                    .setDeliveryState((byte) 2).setDeliveryCount((short) 1),
                new ShareSnapshotValue.StateBatch().setFirstOffset(105L).setLastOffset(105L)
                    .setDeliveryState((byte) 4).setDeliveryCount((short) 5))), (short) 0)));
        print("snapshot_dcc", CoordinatorRecord.record(sk, new ApiMessageAndVersion(new ShareSnapshotValue()
            .setSnapshotEpoch(0).setStateEpoch(0).setLeaderEpoch(-1).setStartOffset(-1L).setDeliveryCompleteCount(9)
            .setCreateTimestamp(5L).setWriteTimestamp(6L).setStateBatches(List.of()), (short) 0)));
        print("update", CoordinatorRecord.record(uk, new ApiMessageAndVersion(new ShareUpdateValue()
            .setSnapshotEpoch(3).setLeaderEpoch(8).setStartOffset(-1L)
            .setStateBatches(List.of(
                new ShareUpdateValue.StateBatch().setFirstOffset(106L).setLastOffset(110L)
                    .setDeliveryState((byte) 0).setDeliveryCount((short) 2))), (short) 0)));
        print("update_dcc", CoordinatorRecord.record(uk, new ApiMessageAndVersion(new ShareUpdateValue()
            .setSnapshotEpoch(1).setLeaderEpoch(-1).setStartOffset(12L).setDeliveryCompleteCount(4)
            .setStateBatches(List.of()), (short) 0)));
        print("tombstone", CoordinatorRecord.tombstone(sk));
        for (String g : new String[] {group, "g", "share-group-1", "\u00e9t\u00e9"}) {
            for (int p = 0; p < 3; p++) {
                String key = SharePartitionKey.asCoordinatorKey(g, topicId, p);
                System.out.println("partition " + key + " " + (Utils.abs(key.hashCode()) % 50));
            }
        }
    }
}
