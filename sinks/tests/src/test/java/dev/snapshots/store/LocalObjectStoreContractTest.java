package dev.snapshots.store;

import dev.snapshots.testkit.ObjectStoreContract;
import dev.snapshots.testkit.StoreKind;

/** The local filesystem store, on real files. */
class LocalObjectStoreContractTest extends ObjectStoreContract {
    @Override
    protected StoreSpec freshStore() {
        return StoreKind.FILESYSTEM.fresh();
    }
}
