package dev.snapshots.store;

/** What a test needs of {@link StoreConformance}'s memory of proven stores. */
public final class ProvenStores {
    private ProvenStores() {}

    /**
     * Forgets the stores this process proved: a cluster in one process then behaves as one whose
     * TaskManagers are processes of their own, each starting with none proven.
     */
    public static void forget() {
        StoreConformance.forgetProven();
    }
}
