package dev.snapshots.store.s3;

import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.ObjectStoreContract;
import dev.snapshots.testkit.StoreKind;

/** The S3 store against S3Proxy 4.1.0 over HTTP. */
class S3ObjectStoreContractITCase extends ObjectStoreContract {
    @Override
    protected StoreSpec freshStore() {
        return StoreKind.S3_INLINE.fresh();
    }
}
