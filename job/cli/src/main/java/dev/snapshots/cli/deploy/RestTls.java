package dev.snapshots.cli.deploy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.apache.flink.annotation.Internal;

/**
 * What the command line presents to, and trusts in, a JobManager whose REST API speaks TLS with
 * mutual authentication ({@code security.ssl.rest.enabled}, {@code
 * security.ssl.rest.authentication-enabled}): a PKCS12 keystore with the client's key and
 * certificate, a PKCS12 truststore with what signed the JobManager's certificate, and their one
 * password. They come from the environment, under the names the ECS module's TLS prelude gives
 * them: the commands run in containers that have no Flink configuration of their own.
 *
 * <p>The JobManager's certificate must name the host the client addresses (the JDK verifies it):
 * {@code localhost} for the JobManager container's own {@code submit} and {@code release}, the
 * service-discovery name for the protect sidecars and the operator task.
 */
@Internal
public record RestTls(Path keystore, Path truststore, String password) {
    public static final String KEYSTORE = "SNAPSHOTS_REST_KEYSTORE";
    public static final String TRUSTSTORE = "SNAPSHOTS_REST_TRUSTSTORE";
    public static final String PASSWORD = "SNAPSHOTS_REST_TLS_PASSWORD";

    /**
     * The stores the environment names; empty when it names none (an {@code https} address is then
     * trusted as the JDK trusts any, with no client certificate).
     *
     * @throws IllegalArgumentException if it names some of them only
     */
    public static Optional<RestTls> fromEnvironment(Map<String, String> env) {
        List<String> names = List.of(KEYSTORE, TRUSTSTORE, PASSWORD);
        List<String> unset = names.stream().filter(n -> env.getOrDefault(n, "").isEmpty()).toList();
        if (unset.size() == names.size()) {
            return Optional.empty();
        }
        if (!unset.isEmpty()) {
            throw new IllegalArgumentException(
                    "the REST API's TLS takes all of " + names + "; not set: " + unset);
        }
        return Optional.of(
                new RestTls(
                        Path.of(env.get(KEYSTORE)),
                        Path.of(env.get(TRUSTSTORE)),
                        env.get(PASSWORD)));
    }

    /** A TLS context that presents the keystore's key and trusts the truststore only. */
    public SSLContext sslContext() throws IOException {
        try {
            KeyManagerFactory keys =
                    KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(load(keystore), password.toCharArray());
            TrustManagerFactory trust =
                    TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(load(truststore));
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IOException(
                    "the REST TLS stores " + keystore + " and " + truststore + " are unusable", e);
        }
    }

    private KeyStore load(Path store) throws IOException, GeneralSecurityException {
        KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keyStore.load(in, password.toCharArray());
        } catch (IOException e) {
            throw new IOException(
                    "cannot read the REST TLS store "
                            + store
                            + " (PKCS12) with "
                            + PASSWORD
                            + ": "
                            + e.getMessage(),
                    e);
        }
        return keyStore;
    }
}
