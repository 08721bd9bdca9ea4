package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The REST API's TLS stores as the environment names them (the ECS module's prelude): all or none,
 * and a store that cannot be read is named. RestMutualTlsITCase runs them against a real cluster.
 */
class RestTlsTest {
    @TempDir Path dir;

    @Test
    void anEnvironmentThatNamesNoStoreMeansNoClientCertificate() {
        assertThat(RestTls.fromEnvironment(Map.of("SNAPSHOTS_REST", "https://jm:8081"))).isEmpty();
    }

    @Test
    void theStoresAndTheirPasswordComeFromTheEnvironment() {
        assertThat(
                        RestTls.fromEnvironment(
                                Map.of(
                                        RestTls.KEYSTORE, "/tmp/k.p12",
                                        RestTls.TRUSTSTORE, "/tmp/t.p12",
                                        RestTls.PASSWORD, "secret")))
                .isEqualTo(
                        Optional.of(
                                new RestTls(
                                        Path.of("/tmp/k.p12"), Path.of("/tmp/t.p12"), "secret")));
    }

    @Test
    void anEnvironmentThatNamesSomeStoresOnlyIsRefusedNamingWhatIsMissing() {
        assertThatThrownBy(
                        () ->
                                RestTls.fromEnvironment(
                                        Map.of(
                                                RestTls.KEYSTORE,
                                                "/tmp/k.p12",
                                                RestTls.PASSWORD,
                                                "")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "not set: [" + RestTls.TRUSTSTORE + ", " + RestTls.PASSWORD + "]");
    }

    @Test
    void aStoreThePasswordDoesNotOpenIsNamed() throws Exception {
        Path store = dir.resolve("keystore.p12");
        KeyStore empty = KeyStore.getInstance("PKCS12");
        empty.load(null, null);
        try (OutputStream out = Files.newOutputStream(store)) {
            empty.store(out, "right".toCharArray());
        }
        assertThatThrownBy(() -> new RestTls(store, store, "wrong").sslContext())
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cannot read the REST TLS store " + store)
                .hasMessageContaining(RestTls.PASSWORD);
    }
}
