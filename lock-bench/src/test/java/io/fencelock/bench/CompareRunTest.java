package io.fencelock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Capability;
import org.junit.jupiter.api.Test;

class CompareRunTest {
    @Test
    void everyCapabilityHasALineForWhenItIsNotClaimed() {
        assertThat(CompareRun.WITHOUT).containsOnlyKeys(Capability.values());
    }
}
