package dev.snapshots.harness.cluster;

import dev.snapshots.cli.deploy.RestTls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.flink.annotation.Internal;

/**
 * Throwaway material for Flink's REST TLS with mutual authentication, made by the JDK's keytool
 * when a cluster starts, never committed: a certificate authority, the JobManager's key and
 * certificate (for {@code localhost} and {@code 127.0.0.1}) and a client's, both signed by it, a
 * truststore holding the authority only, and one random password for them all. What an operator
 * gets from a private CA (ACM Private CA, or keytool as here) for the ECS module's {@code
 * rest_tls}.
 */
@Internal
public final class RestCertificates {
    private static final String VALIDITY_DAYS = "30";

    private final Path dir;

    private RestCertificates(Path dir) {
        this.dir = dir;
    }

    /** Makes a new authority and its stores in {@code dir}, readable by this user only. */
    public static RestCertificates create(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(
                dir,
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        RestCertificates made = new RestCertificates(dir);
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        Files.writeString(made.passwordFile(), HexFormat.of().formatHex(random));
        made.keytool(
                "-genkeypair",
                "-alias",
                "ca",
                "-dname",
                "CN=snapshots local cluster CA",
                "-ext",
                "bc:c",
                "-keystore",
                "ca.p12");
        made.keytool(
                "-exportcert", "-alias", "ca", "-keystore", "ca.p12", "-rfc", "-file", "ca.pem");
        made.keytool(
                "-importcert", "-alias", "ca", "-file", "ca.pem", "-keystore", "truststore.p12");
        made.signed("jobmanager", "SAN=dns:localhost,ip:127.0.0.1", "EKU=serverAuth");
        made.signed("client", "EKU=clientAuth");
        Files.delete(dir.resolve("ca.pem"));
        return made;
    }

    /** The stores an earlier {@link #create} made in {@code dir}. */
    public static RestCertificates in(Path dir) {
        return new RestCertificates(dir);
    }

    /** What a client of the cluster presents and trusts: the client's key, the authority. */
    public RestTls client() throws IOException {
        return new RestTls(dir.resolve("client.p12"), dir.resolve("truststore.p12"), password());
    }

    /**
     * The JobManager's settings: TLS on its REST API, with a certificate asked of every client and
     * forward-secret cipher suites, as the ECS module's {@code rest_tls} sets them.
     */
    public List<String> jobManagerConfig() throws IOException {
        String keystore = dir.resolve("jobmanager.p12").toString();
        String truststore = dir.resolve("truststore.p12").toString();
        return List.of(
                "security.ssl.rest.enabled: true",
                "security.ssl.rest.authentication-enabled: true",
                "security.ssl.algorithms: TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,"
                        + "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,"
                        + "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,"
                        + "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                "security.ssl.rest.keystore: " + keystore,
                "security.ssl.rest.keystore-password: " + password(),
                "security.ssl.rest.key-password: " + password(),
                "security.ssl.rest.truststore: " + truststore,
                "security.ssl.rest.truststore-password: " + password());
    }

    /** The environment under which the command line presents {@link #client()}. */
    public List<String> clientEnvironment() throws IOException {
        RestTls client = client();
        return List.of(
                RestTls.KEYSTORE + "=" + client.keystore(),
                RestTls.TRUSTSTORE + "=" + client.truststore(),
                RestTls.PASSWORD + "=" + client.password());
    }

    private String password() throws IOException {
        return Files.readString(passwordFile()).trim();
    }

    private Path passwordFile() {
        return dir.resolve("password");
    }

    /** A key of its own in {@code name}.p12, with a certificate the authority signed. */
    private void signed(String name, String... extensions)
            throws IOException, InterruptedException {
        String store = name + ".p12";
        keytool("-genkeypair", "-alias", name, "-dname", "CN=" + name, "-keystore", store);
        keytool("-certreq", "-alias", name, "-keystore", store, "-file", name + ".csr");
        List<String> sign =
                new ArrayList<>(
                        List.of(
                                "-gencert",
                                "-alias",
                                "ca",
                                "-keystore",
                                "ca.p12",
                                "-infile",
                                name + ".csr",
                                "-outfile",
                                name + ".pem",
                                "-rfc"));
        for (String extension : extensions) {
            sign.addAll(List.of("-ext", extension));
        }
        keytool(sign.toArray(new String[0]));
        // The chain's root first, so that keytool links the signed certificate to it.
        keytool("-importcert", "-alias", "ca", "-file", "ca.pem", "-keystore", store);
        keytool("-importcert", "-alias", name, "-file", name + ".pem", "-keystore", store);
        Files.delete(dir.resolve(name + ".csr"));
        Files.delete(dir.resolve(name + ".pem"));
    }

    private void keytool(String... args) throws IOException, InterruptedException {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                Path.of(System.getProperty("java.home"), "bin", "keytool")
                                        .toString()));
        command.addAll(List.of(args));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", password()));
        // keytool refuses an option its command does not take.
        command.addAll(
                switch (args[0]) {
                    case "-genkeypair" ->
                            List.of(
                                    "-keyalg",
                                    "RSA",
                                    "-keysize",
                                    "2048",
                                    "-validity",
                                    VALIDITY_DAYS);
                    case "-gencert" -> List.of("-validity", VALIDITY_DAYS);
                    case "-importcert" -> List.of("-noprompt");
                    default -> List.<String>of();
                });
        Process keytool =
                new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .start();
        String said = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (keytool.waitFor() != 0) {
            throw new IOException("keytool " + args[0] + " failed: " + said);
        }
    }
}
