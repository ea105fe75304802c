package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class LeaseIdsTest {

    @Test
    void idsAreDistinctRandomUuidsAcrossBlocksAndKeys() {
        LeaseIds ids = new LeaseIds(2 * LeaseIds.IDS_PER_BLOCK);
        Set<String> seen = new HashSet<>();
        int count = 10 * LeaseIds.IDS_PER_BLOCK + 3;
        for (int i = 0; i < count; i++) {
            String id = ids.next();
            UUID parsed = UUID.fromString(id);
            assertThat(parsed.version()).isEqualTo(4);
            assertThat(parsed.variant()).isEqualTo(2);
            assertThat(parsed.toString()).isEqualTo(id);
            seen.add(id);
        }
        assertThat(seen).hasSize(count);
        assertThat(ids.keysDrawn()).isEqualTo(6); // a new key every two blocks
    }

    @Test
    void twoGeneratorsDoNotShareAStream() {
        LeaseIds a = new LeaseIds(LeaseIds.IDS_PER_KEY);
        LeaseIds b = new LeaseIds(LeaseIds.IDS_PER_KEY);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            seen.add(a.next());
            seen.add(b.next());
        }
        assertThat(seen).hasSize(2000);
    }
}
